"""What the Devil's Advocate prompts show: task, websites, plan, history by episode, notes."""

from __future__ import annotations

from envs.base import Observation
from nodes.da.views import experience_text, goal_of, history_text, notes_text, plan_text, site_of, subtask_text


def test_goal_and_websites_come_from_the_env_info():
    obs = Observation(
        "screen",
        url="http://127.0.0.1:7770/",
        info={"intent": "Find the frame", "sites": ["shopping", "gitlab"], "site_urls": {"shopping": "http://127.0.0.1:7770"}},
    )
    assert goal_of(obs, "12") == "Find the frame"
    site = site_of(obs)
    assert site["websites"] == "- An online shopping site (OneStopShop): http://127.0.0.1:7770\n- A GitLab site"
    assert "starting at http://127.0.0.1:7770/" in site["website_intro"] and site["instruction"] == "None"


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
