"""WebArena task configs: all 812 load, placeholders resolve from the environment, allowlists."""

from __future__ import annotations

import json
import logging

import pytest

from envs import EnvError, UnknownTaskError, make_env
from envs.webarena import tasks as wt
from envs.webarena.env import _warn_run_judge

URLS = {var: f"http://{site}.test:{7000 + i}" for i, (site, var) in enumerate(wt.WEBARENA_SITES.values())}


def test_all_812_webarena_configs_and_the_local_tasks_load_with_string_ids() -> None:
    assert wt.task_ids("webarena") == [str(i) for i in range(812)]
    local = wt.task_ids("local")
    assert local == [f"shop-{i}" for i in range(len(local))] and len(local) >= 10
    assert wt.task_ids() == wt.task_ids("webarena") + local
    keys = set(wt.config("0"))
    for task_id in local:  # the local tasks use WebArena's format
        assert set(wt.config(task_id)) == keys
    with pytest.raises(EnvError, match="unknown webarena split"):
        wt.task_ids("train")
    with pytest.raises(UnknownTaskError):
        wt.config("812")


def test_local_tasks_cover_information_seeking_navigation_and_form_drafts() -> None:
    kinds = [tuple(wt.config(t)["eval"]["eval_types"]) for t in wt.task_ids("local")]
    assert kinds.count(("string_match",)) >= 5
    assert kinds.count(("url_match",)) >= 3
    assert kinds.count(("program_html",)) >= 2
    assert "picture frame" in wt.config("shop-0")["intent"]


def test_every_config_resolves_to_urls_without_placeholders() -> None:
    for task_id in wt.task_ids():
        raw = wt.config(task_id)
        urls = wt.site_urls(raw, environ=URLS, local_url=lambda site: "http://127.0.0.1:5555/")
        resolved = wt.resolve(raw, urls)
        text = json.dumps(resolved)
        assert not any(ph in text for ph in [*wt.WEBARENA_SITES, *wt.LOCAL_SITES]), task_id
        for url in wt.start_urls(resolved):
            assert url.startswith("http://"), (task_id, url)
            assert any(url.startswith(o) for o in wt.origins(urls)), (task_id, url)


def test_placeholders_resolve_longest_first_and_glued_ones_split() -> None:
    urls = {"__SHOPPING__": "http://s:1", "__SHOPPING_ADMIN__": "http://a:2/admin", "__REDDIT__": "http://r:3"}
    cfg = {
        "sites": ["shopping_admin"],
        "start_url": "__SHOPPING_ADMIN__/x |AND| __SHOPPING__/y",
        "eval": {"reference_url": "__SHOPPING____REDDIT__"},
    }
    assert wt.placeholders_of(cfg) == ["__SHOPPING_ADMIN__", "__SHOPPING__", "__REDDIT__"]
    resolved = wt.resolve(cfg, urls)
    assert wt.start_urls(resolved) == ["http://a:2/admin/x", "http://s:1/y"]
    assert wt.origins(urls) == ("http://s:1", "http://a:2", "http://r:3")


def test_multi_site_tasks_allow_every_site_they_name() -> None:
    raw = wt.config(next(t for t in wt.task_ids("webarena") if set(wt.config(t)["sites"]) == {"gitlab", "reddit"}))
    urls = wt.site_urls(raw, environ=URLS)
    assert set(urls) == {"__GITLAB__", "__REDDIT__"}
    assert set(wt.origins(urls)) == {URLS["WEBARENA_GITLAB"], URLS["WEBARENA_REDDIT"]}


async def test_resetting_a_task_whose_site_is_unset_names_the_variable(monkeypatch) -> None:
    monkeypatch.delenv("WEBARENA_GITLAB", raising=False)
    gitlab_task = next(t for t in wt.task_ids("webarena") if wt.config(t)["sites"] == ["gitlab"])
    env = make_env("webarena")
    with pytest.raises(EnvError) as err:
        await env.reset(gitlab_task)
    assert "WEBARENA_GITLAB" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(UnknownTaskError):
        await env.reset("no-such-task")
    await env.close()


def test_storage_state_comes_from_the_auth_dir(tmp_path, monkeypatch) -> None:
    raw = wt.config("0")  # shopping_admin, ./.auth/shopping_admin_state.json
    (tmp_path / "shopping_admin_state.json").write_text('{"cookies": [{"name": "admin", "value": "1"}]}')
    state = wt.storage_state(raw, environ={wt.AUTH_DIR_VAR: str(tmp_path)})
    assert state == {"cookies": [{"name": "admin", "value": "1"}]}
    (tmp_path / "work" / ".auth").mkdir(parents=True)
    (tmp_path / "work" / ".auth" / "shopping_admin_state.json").write_text('{"cookies": []}')
    monkeypatch.chdir(tmp_path / "work")  # without the variable: ./.auth, as the configs say
    assert wt.storage_state(raw, environ={}) == {"cookies": []}
    gitlab = wt.config(next(t for t in wt.task_ids() if wt.config(t)["sites"] == ["gitlab"]))
    with pytest.raises(EnvError, match="introspect webarena login") as err:
        wt.storage_state(gitlab, environ={wt.AUTH_DIR_VAR: str(tmp_path)})
    assert "gitlab_state.json" in str(err.value) and "\n" not in str(err.value)
    assert wt.storage_state(wt.config("shop-0"), environ={wt.AUTH_DIR_VAR: str(tmp_path)}) is None  # the env signs in
    assert (
        wt.storage_state(next(wt.config(t) for t in wt.task_ids() if not wt.config(t)["storage_state"]), environ={})
        is None
    )  # a task without a login


def test_bad_env_options_are_user_errors() -> None:
    with pytest.raises(EnvError):
        make_env("webarena", colour="red")
    with pytest.raises(EnvError):
        make_env("webarena", viewport_width=10)
    with pytest.raises(EnvError, match="judge"):
        make_env("webarena", judge_model="no-provider")
    with pytest.raises(EnvError, match="judge"):
        make_env("hotpotqa", judge="gpt-4o")


def test_webarena_is_judged_by_its_fixed_model_unless_an_option_names_another() -> None:
    """WebArena grades fuzzy_match and N/A answers with gpt-4-1106-preview, whatever model runs."""
    assert make_env("webarena").judge_model == "openai:gpt-4-1106-preview"
    assert make_env("webarena", judge_model="anthropic:claude-x").judge_model == "anthropic:claude-x"
    assert make_env("webarena", judge="off").judge_model is None


def test_the_runs_own_model_as_judge_is_allowed_with_one_warning(caplog) -> None:
    _warn_run_judge.cache_clear()
    with caplog.at_level(logging.WARNING, logger="envs.webarena.env"):
        assert make_env("webarena", judge="run").judge_model == "run"
        make_env("webarena", judge_model="run")  # a second env of the same process: no second warning
        make_env("webarena")
    [warning] = caplog.records
    assert "judge=run" in warning.getMessage() and "\n" not in warning.getMessage()
