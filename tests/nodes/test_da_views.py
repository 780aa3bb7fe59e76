"""What the Devil's Advocate prompts show: task, websites, plan, history by episode, notes."""

from __future__ import annotations

from envs.base import Observation
from nodes.da.views import SITE_INTROS, experience_text, goal_of, history_text, notes_text, plan_text, site_of, subtask_text


def test_goal_and_websites_come_from_the_env_info():
    obs = Observation(
        "screen",
        url="http://127.0.0.1:7770/",
        info={"intent": "Find the frame", "sites": ["shopping", "gitlab"], "site_urls": {"shopping": "http://127.0.0.1:7770"}},
    )
    assert goal_of(obs, "12") == "Find the frame"
    site = site_of(obs)
    assert site["websites"] == "- An online shopping site (OneStopShop): http://127.0.0.1:7770\n- A GitLab site"
    # {WEBSITE INTRO} is the task's sites in the appendix's own words; {INSTRUCTION} is open
    assert site["website_intro"] == "An online shopping site (OneStopShop): http://127.0.0.1:7770\nA GitLab site"
    assert site["instruction"] == "None"
    assert site_of(obs, "Answer N/A when the task cannot be done.")["instruction"] == (
        "Answer N/A when the task cannot be done.")


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


def test_without_site_info_the_start_url_names_the_website():
    obs = Observation("screen", url="http://localhost:8000/orders", info={})
    assert goal_of(obs, "7") == "task 7"
    assert site_of(obs)["websites"] == "- The website at http://localhost:8000"


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
