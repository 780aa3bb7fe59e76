"""`introspect webarena login` against the local shop's sign-in page, and the env starting signed in."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from envs import EnvError, make_env
from envs.sites.shop import session
from envs.webarena import login as webarena_login
from introspect.cli import main

ACCOUNT = {"WEBARENA_SHOP_USER": "emma.lopez@example.com", "WEBARENA_SHOP_PASSWORD": "Password.123"}


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for var in ["WEBARENA_AUTH_DIR", *webarena_login.SITE_VARS.values()]:
        monkeypatch.delenv(var, raising=False)
    for site in webarena_login.SITES:
        for var in webarena_login.credential_vars(site):
            monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["webarena", "login", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.browser
def test_login_stores_the_session_and_the_env_starts_with_it(clean_env, capsys, tmp_path) -> None:
    for var, value in ACCOUNT.items():
        clean_env.setenv(var, value)
    auth = tmp_path / "logins"
    code, out, err = run(capsys, "--site", "shop", "--auth-dir", str(auth))
    assert code == 0, err
    state_file = auth / "shop_state.json"
    assert f"signed in: {state_file}" in out and "WEBARENA_AUTH_DIR" in out  # not the env's default dir
    [cookie] = json.loads(state_file.read_text())["cookies"]
    assert (
        cookie["name"] == session.SESSION_COOKIE and session.email_of(cookie["value"]) == ACCOUNT["WEBARENA_SHOP_USER"]
    )

    clean_env.setenv("WEBARENA_AUTH_DIR", str(auth))
    asyncio.run(_starts_with_the_stored_session(cookie["value"]))


async def _starts_with_the_stored_session(value: str) -> None:
    env = make_env("webarena")
    try:
        obs = await env.reset("shop-3")
        assert "StaticText 'Welcome, Emma Lopez!'" in obs.text and "link 'Sign Out'" in obs.text
        cookies = await env._ep.session.context.cookies()  # type: ignore[attr-defined]
        # the stored session itself, not a new sign-in (every sign-in gets a new value)
        assert [c["value"] for c in cookies if c["name"] == session.SESSION_COOKIE] == [value]
        orders = await env.step("goto [" + obs.url.rstrip("/") + "/sales/order/history/]")
        assert orders.observation.url.endswith("/sales/order/history/")  # not sent to sign in
    finally:
        await env.close()


@pytest.mark.browser
async def test_without_a_stored_login_the_env_signs_in_to_the_local_shop_itself(clean_env) -> None:
    env = make_env("webarena")
    try:
        obs = await env.reset("shop-3")
        assert "StaticText 'Welcome, Emma Lopez!'" in obs.text
        signed_out = await env.step("click [9]")  # Sign Out
        assert "link 'Sign In'" in signed_out.observation.text
        back = await env.step("goto [" + obs.url.rstrip("/") + "/sales/order/history/]")
        assert "/customer/account/login/?referer=" in back.observation.url  # the site asks to sign in
        assert "textbox 'Email'" in back.observation.text and "button 'Sign In'" in back.observation.text
    finally:
        await env.close()


@pytest.mark.browser
def test_wrong_password_fails_in_one_line_and_writes_nothing(clean_env, capsys, tmp_path) -> None:
    clean_env.setenv("WEBARENA_SHOP_USER", ACCOUNT["WEBARENA_SHOP_USER"])
    clean_env.setenv("WEBARENA_SHOP_PASSWORD", "not-it")
    code, out, err = run(capsys, "--site", "shop")
    assert code == 1 and "signing in to shop failed" in err and "WEBARENA_SHOP_PASSWORD" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / ".auth").exists()


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--site", "shop"], {}, "set WEBARENA_SHOP_USER and WEBARENA_SHOP_PASSWORD"),
        (["--site", "bank"], {}, "no login for site 'bank'"),
        (["--site", "map"], {"WEBARENA_MAP": "http://m:3000"}, "no login for site 'map'"),
        (
            ["--site", "gitlab"],
            {"WEBARENA_GITLAB_USER": "u", "WEBARENA_GITLAB_PASSWORD": "p"},
            "site gitlab is not configured: set WEBARENA_GITLAB",
        ),
        ([], {}, "no WebArena site with accounts is configured"),
        ([], {"WEBARENA_REDDIT": "http://r:9999"}, "set WEBARENA_REDDIT_USER and WEBARENA_REDDIT_PASSWORD"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(clean_env, capsys, tmp_path, args, env, message) -> None:
    for var, value in env.items():
        clean_env.setenv(var, value)
    code, out, err = run(capsys, *args)
    assert code == 2 and message in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / ".auth").exists()


def test_without_sites_named_every_configured_site_and_webarenas_pairs_are_signed_into() -> None:
    environ = {
        var: f"http://{site}.test"
        for site, var in webarena_login.SITE_VARS.items()
        if site in ("shopping", "shopping_admin", "reddit", "gitlab")
    }
    for site in ("shopping", "shopping_admin", "reddit", "gitlab"):
        user, password = webarena_login.credential_vars(site)
        environ.update({user: "u", password: "p"})
    combos = webarena_login.plan([], environ)
    names = sorted(webarena_login.state_name(c) for c in combos)
    assert names == sorted(
        [
            "shopping_state.json",
            "reddit_state.json",
            "shopping_admin_state.json",
            "gitlab_state.json",
            "gitlab.reddit_state.json",
            "gitlab.shopping_state.json",
            "gitlab.shopping_admin_state.json",
            "shopping.shopping_admin_state.json",
        ]
    )  # auto_login skips reddit with shopping or shopping_admin
    assert webarena_login.plan(["reddit", "gitlab"], environ) == [("gitlab", "reddit")]
    with pytest.raises(EnvError, match="WEBARENA_GITLAB_PASSWORD"):
        webarena_login.plan(["gitlab"], {k: v for k, v in environ.items() if k != "WEBARENA_GITLAB_PASSWORD"})


def test_every_state_file_the_configs_name_can_be_written() -> None:
    """The logins the 812 tasks start with are among the files `login` writes."""
    from envs.webarena import tasks as webarena_tasks

    named = {
        Path(webarena_tasks.config(t)["storage_state"]).name
        for t in webarena_tasks.task_ids()
        if webarena_tasks.config(t)["storage_state"]
    }
    environ = {var: "http://x.test" for var in webarena_login.SITE_VARS.values()}
    for site in webarena_login.SITES:
        user, password = webarena_login.credential_vars(site)
        environ.update({user: "u", password: "p"})
    written = {webarena_login.state_name(c) for c in webarena_login.plan([], environ)} | {"shop_state.json"}
    assert named <= written and "gitlab.reddit_state.json" in named
