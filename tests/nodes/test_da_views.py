"""What the Devil's Advocate prompts show: task, websites, plan, history by episode, notes."""

from __future__ import annotations

from envs.base import Observation
from envs.webarena.interface import INTERFACE as WEBARENA
from envs.webarena.interface import SITE_INTROS, sandbox_intro, site_intro
from envs.webshop.interface import INTERFACE as WEBSHOP
from nodes.da.views import (
    experience_text,
    history_text,
    notes_text,
    plan_text,
    site_of,
    subtask_text,
)


def test_websites_come_from_the_envs_introduction_of_the_task():
    intro = site_intro(["shopping", "gitlab"], {"shopping": "http://127.0.0.1:7770"})
    obs = Observation("screen", url="http://127.0.0.1:7770/", info={"goal": "Find the frame", "intro": intro})
    site = site_of(obs, WEBARENA)
    assert site["websites"] == "- An online shopping site (OneStopShop): http://127.0.0.1:7770\n- A GitLab site"
    # {WEBSITE INTRO} is the task's sites in the appendix's own words; {INSTRUCTION} is open
    assert site["website_intro"] == "An online shopping site (OneStopShop): http://127.0.0.1:7770\nA GitLab site"
    assert site["instruction"] == "None"
    assert site_of(obs, WEBARENA, "Answer N/A when the task cannot be done.")["instruction"] == (
        "Answer N/A when the task cannot be done."
    )


def test_the_websites_list_every_site_of_the_sandbox_and_the_intro_the_tasks():
    """The appendix's prompts list all of WebArena's sites; {WEBSITE INTRO} is the task's own."""
    urls = {"shopping": "http://s:7770", "reddit": "http://r:9999", "homepage": "http://h:4399", "gitlab": "http://g"}
    info = {"intro": site_intro(["reddit"], urls), "websites": sandbox_intro(urls)}
    site = site_of(Observation("screen", info=info), WEBARENA)
    assert site["websites"] == (
        "- An online shopping site (OneStopShop): http://s:7770\n"
        "- A Reddit site (Postmill): http://r:9999\n"
        "- A GitLab site: http://g"
    )  # in the appendix's order; the homepage, which it does not list, left out
    assert site["website_intro"] == "A Reddit site (Postmill): http://r:9999"


def test_every_webarena_site_has_the_appendixs_introduction():
    from envs.webarena import tasks as webarena_tasks

    used = {site for t in webarena_tasks.task_ids() for site in webarena_tasks.config(t)["sites"]}
    assert used == {"shopping", "shopping_admin", "reddit", "gitlab", "map", "wikipedia", "shop"}
    assert {site: SITE_INTROS[site] for site in used} == {
        "shopping": "An online shopping site (OneStopShop)",
        "shopping_admin": "An e-commerce management site (Magento)",
        "reddit": "A Reddit site (Postmill)",
        "gitlab": "A GitLab site",
        "map": "A map site (OpenStreetMap)",
        "wikipedia": "A Wikipedia site",
        "shop": "An online shopping site (One Stop Market, served locally by the project)",
    }


def test_without_a_task_intro_the_envs_own_introduction_is_shown():
    site = site_of(Observation("screen", info={"goal": "Buy a pillow"}), WEBSHOP)
    assert site["website_intro"] == WEBSHOP.intro and site["websites"] == f"- {WEBSHOP.intro}"


def test_plan_history_and_notes_render_as_numbered_lists():
    state = {
        "plan": ["Open My Orders.", "Open the order."],
        "subtask": 1,
        "episode": 2,
        "history": [
            {"episode": 1, "action": "click [1]", "text": "Opened My Account."},
            {"episode": 2, "action": "click [2]", "text": "Opened My Orders."},
        ],
        "notes": [],
    }
    assert plan_text(state) == "1. Open My Orders.\n2. Open the order."
    assert subtask_text(state) == "Open the order."
    assert subtask_text({**state, "subtask": 2}) == "None"
    assert history_text(state, episode=2) == "1. Opened My Orders."
    assert experience_text(state) == "Episode 1:\n1. Opened My Account.\n\nEpisode 2:\n1. Opened My Orders."
    assert notes_text(state) == "None"
