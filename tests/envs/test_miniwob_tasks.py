"""Real MiniWoB++ tasks solved in Chromium with known-correct actions, read off the screen.

Each solver acts as a person would: it reads the goal (the utterance) and the compact screen,
finds the element by its text, class or position, and acts on the ids shown; nothing is
hard-coded per seed. A task counts as solved when the page itself gives reward 1.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import pytest

from envs.base import Observation, StepResult
from envs.miniwob import MiniWoBEnv
from envs.miniwob.tasks import (
    N_SCREEN_N_STEP,
    ONE_SCREEN_N_STEP,
    ONE_SCREEN_ONE_STEP,
    category,
)

pytestmark = pytest.mark.browser

_LINE = re.compile(r"^<(?P<tag>[\w-]+)(?: id=(?P<id>\d+))?(?P<attrs>[^>]*)>(?P<text>.*?)(?:</(?P=tag)>)?$")


@dataclass
class El:
    tag: str
    id: str | None
    attrs: dict[str, str]
    flags: set[str]
    text: str


def elements(obs: Observation) -> list[El]:
    """The compact screen, line by line (every line must be well formed)."""
    out = []
    for line in obs.text.splitlines():
        m = _LINE.match(line)
        assert m, f"malformed screen line: {line!r}"
        attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', m["attrs"]))
        flags = set(re.sub(r'[\w-]+="[^"]*"', "", m["attrs"]).split())
        out.append(El(m["tag"], m["id"], attrs, flags, m["text"]))
    return out


def find(
    obs: Observation,
    *,
    text: str | None = None,
    tag: str | None = None,
    cls: str | None = None,
    type_: str | None = None,
) -> El:
    """The first element with an id matching every given criterion."""
    for el in elements(obs):
        if el.id is None:
            continue
        if text is not None and el.text != text:
            continue
        if tag is not None and el.tag != tag:
            continue
        if cls is not None and cls not in el.attrs.get("class", "").split():
            continue
        if type_ is not None and el.attrs.get("type") != type_:
            continue
        return el
    raise AssertionError(f"no element text={text!r} tag={tag!r} cls={cls!r} on screen:\n{obs.text}")


def has(obs: Observation, **criteria: str) -> bool:
    try:
        find(obs, **criteria)
    except AssertionError:
        return False
    return True


def quoted(obs: Observation) -> str:
    return re.search(r'"(.*?)"', obs.info["utterance"])[1]  # type: ignore[index]


async def act(env: MiniWoBEnv, action: str) -> StepResult:
    result = await env.step(action)
    assert result.valid, (action, result.feedback)
    return result


async def click(env: MiniWoBEnv, el: El) -> StepResult:
    return await act(env, f"click id={el.id}")


def labelled_boxes(obs: Observation, input_type: str) -> dict[str, El]:
    """Checkbox/radio -> the text shown right after it (its label)."""
    els = elements(obs)
    return {
        els[i + 1].text: el for i, el in enumerate(els[:-1]) if el.tag == "input" and el.attrs.get("type") == input_type
    }


# --- solvers, one per task -------------------------------------------------------------------

Solver = Callable[[MiniWoBEnv, Observation], Awaitable[StepResult]]


async def solve_click_test(env: MiniWoBEnv, obs: Observation) -> StepResult:
    return await click(env, find(obs, tag="button", text="Click Me!"))


async def solve_click_test_2(env: MiniWoBEnv, obs: Observation) -> StepResult:
    label = re.search(r"Click button (\w+)", obs.info["utterance"])[1]  # type: ignore[index]
    return await click(env, find(obs, tag="button", text=label))


async def solve_quoted_button(env: MiniWoBEnv, obs: Observation) -> StepResult:
    return await click(env, find(obs, tag="button", text=quoted(obs)))


async def solve_click_link(env: MiniWoBEnv, obs: Observation) -> StepResult:
    return await click(env, find(obs, cls="alink", text=quoted(obs)))


async def solve_click_dialog(env: MiniWoBEnv, obs: Observation) -> StepResult:
    return await click(env, find(obs, cls="ui-icon-closethick"))


async def solve_click_tab(env: MiniWoBEnv, obs: Observation) -> StepResult:
    tab = re.search(r"(Tab #\d+)", obs.info["utterance"])[1]  # type: ignore[index]
    return await click(env, find(obs, tag="a", text=tab))


async def solve_focus_text_2(env: MiniWoBEnv, obs: Observation) -> StepResult:
    nth = int(re.search(r"(\d+)(?:st|nd|rd|th)", obs.info["utterance"])[1])  # type: ignore[index]
    inputs = [el for el in elements(obs) if el.tag == "input" and el.id]
    return await click(env, inputs[nth - 1])


async def solve_button_sequence(env: MiniWoBEnv, obs: Observation) -> StepResult:
    first, second = re.findall(r"button (\w+)", obs.info["utterance"])
    await click(env, find(obs, tag="button", text=first))
    return await click(env, find(obs, tag="button", text=second))


async def solve_checkboxes(env: MiniWoBEnv, obs: Observation) -> StepResult:
    wanted = re.match(r"Select (.*) and click Submit", obs.info["utterance"])[1]  # type: ignore[index]
    words = [] if wanted == "nothing" else wanted.split(", ")
    boxes = labelled_boxes(obs, "checkbox")
    for word in words:
        result = await click(env, boxes[word])
        assert "checked" in next(e for e in elements(result.observation) if e.id == boxes[word].id).flags
    return await click(env, find(result.observation if words else obs, tag="button", text="Submit"))


async def solve_click_option(env: MiniWoBEnv, obs: Observation) -> StepResult:
    word = re.match(r"Select (.*) and click Submit", obs.info["utterance"])[1]  # type: ignore[index]
    result = await click(env, labelled_boxes(obs, "radio")[word])
    return await click(env, find(result.observation, tag="button", text="Submit"))


async def solve_click_collapsible(env: MiniWoBEnv, obs: Observation) -> StepResult:
    assert not has(obs, cls="ui-accordion-content")  # collapsed: its content is not shown
    result = await click(env, find(obs, tag="h3"))
    assert has(result.observation, cls="ui-accordion-content")
    return await click(env, find(result.observation, tag="button", text="Submit"))


async def solve_scroll_list(env: MiniWoBEnv, obs: Observation) -> StepResult:
    wanted = re.match(r"Select (.*) from the scroll", obs.info["utterance"])[1]  # type: ignore[index]
    names = wanted.split(", ")
    await act(env, "hold CTRL")
    for name in names:
        await click(env, find(obs, tag="option", text=name))
    await act(env, "release CTRL")
    return await click(env, find(obs, tag="button", text="Submit"))


async def solve_enter_text(env: MiniWoBEnv, obs: Observation) -> StepResult:
    text = quoted(obs)
    if "upper case" in obs.info["utterance"]:
        text = text.upper()
    elif "lower case" in obs.info["utterance"]:
        text = text.lower()
    result = await act(env, f'enter "{text}" to id={find(obs, tag="input").id}')
    assert find(result.observation, tag="input").attrs["value"] == text
    return await click(env, find(obs, tag="button", text="Submit"))


async def solve_enter_password(env: MiniWoBEnv, obs: Observation) -> StepResult:
    for box in [el for el in elements(obs) if el.attrs.get("type") == "password"]:
        await act(env, f'enter "{quoted(obs)}" to id={box.id}')
    return await click(env, find(obs, tag="button", text="Submit"))


async def solve_login_user(env: MiniWoBEnv, obs: Observation) -> StepResult:
    user, password = re.findall(r'"(.*?)"', obs.info["utterance"])
    await act(env, f'enter "{user}" to id={find(obs, cls="username").id}')
    await act(env, f'enter "{password}" to id={find(obs, cls="password").id}')
    return await click(env, find(obs, tag="button", text="Login"))


async def solve_read_table(env: MiniWoBEnv, obs: Observation) -> StepResult:
    label = re.search(r"value of (.*) into the text field", obs.info["utterance"])[1]  # type: ignore[index]
    cells = [el for el in elements(obs) if el.tag == "td"]
    value = next(cells[i + 1].text for i, c in enumerate(cells) if c.text == label)
    await act(env, f'enter "{value}" to id={find(obs, tag="input").id}')
    return await click(env, find(obs, tag="button", text="Submit"))


async def solve_click_tab_2(env: MiniWoBEnv, obs: Observation) -> StepResult:
    target = quoted(obs)
    for tab in [el for el in elements(obs) if "ui-tabs-anchor" in el.attrs.get("class", "")]:
        obs = (await click(env, tab)).observation
        if has(obs, cls="alink", text=target):
            return await click(env, find(obs, cls="alink", text=target))
    raise AssertionError(f"link {target!r} on no tab")


async def solve_click_collapsible_2(env: MiniWoBEnv, obs: Observation) -> StepResult:
    target = quoted(obs)
    for header in [el for el in elements(obs) if el.tag == "h3"]:
        obs = (await click(env, header)).observation
        if has(obs, cls="alink", text=target):
            return await click(env, find(obs, cls="alink", text=target))
    raise AssertionError(f"link {target!r} in no section")


async def solve_navigate_tree(env: MiniWoBEnv, obs: Observation) -> StepResult:
    target, opened = quoted(obs), set()
    while not has(obs, text=target, tag="span"):
        closed = [
            el
            for el in elements(obs)
            if "expandable-hitarea" in el.attrs.get("class", "").split() and el.id not in opened
        ]
        assert closed, f"{target!r} not found and no folder left to open"
        opened.add(closed[0].id)
        obs = (await click(env, closed[0])).observation
    return await click(env, find(obs, text=target, tag="span"))


async def solve_email_inbox(env: MiniWoBEnv, obs: Observation) -> StepResult:
    goal = obs.info["utterance"]
    sender = re.match(r"Find the email by (\w+)", goal)[1]  # type: ignore[index]
    obs = (await click(env, find(obs, cls="email-sender", text=sender))).observation
    if "forward" in goal:
        obs = (await click(env, find(obs, text="Forward"))).observation
        recipient = re.search(r"forward that email to (\w+)", goal)[1]  # type: ignore[index]
        await act(env, f'enter "{recipient}" to id={find(obs, cls="forward-sender").id}')
        return await click(env, find(obs, cls="send-forward"))
    if "reply" in goal:
        obs = (await click(env, find(obs, text="Reply"))).observation
        await act(env, f'enter "{quoted(obs)}" to id={find(obs, tag="textarea").id}')
        return await click(env, find(obs, cls="send-reply"))
    return await click(env, find(obs, cls="trash" if "trash" in goal else "star"))


async def solve_use_autocomplete(env: MiniWoBEnv, obs: Observation) -> StepResult:
    start, end = re.findall(r'"(.*?)"', obs.info["utterance"])[:2]
    obs = (await act(env, f'enter "{start}" to id={find(obs, tag="input").id}')).observation
    item = next(
        el
        for el in elements(obs)
        if "ui-menu-item-wrapper" in el.attrs.get("class", "") and el.text.startswith(start) and el.text.endswith(end)
    )
    obs = (await click(env, item)).observation
    assert find(obs, tag="input").attrs["value"] == item.text
    return await click(env, find(obs, tag="button", text="Submit"))


async def solve_search_engine(env: MiniWoBEnv, obs: Observation) -> StepResult:
    nth = int(re.search(r"(\d+)(?:st|nd|rd|th) search", obs.info["utterance"])[1])  # type: ignore[index]
    await act(env, f'enter "{quoted(obs)}" to id={find(obs, tag="input").id}')
    obs = (await click(env, find(obs, tag="button", text="Search"))).observation
    per_page = len([el for el in elements(obs) if "search-title" in el.attrs.get("class", "")])
    page = (nth - 1) // per_page + 1
    if page > 1:
        obs = (await click(env, find(obs, cls="page-link", text=str(page)))).observation
    titles = [el for el in elements(obs) if "search-title" in el.attrs.get("class", "")]
    return await click(env, titles[(nth - 1) % per_page])


async def solve_click_pie(env: MiniWoBEnv, obs: Observation) -> StepResult:
    # The closed menu's items, scaled to a dot under its "+", are listed (MiniWoB++'s reader lists
    # them) at the centre; the spreader's own "+" label lies on top of it and takes its click.
    items = [el for el in elements(obs) if "wheelnav-divWheel-slice-" in el.attrs.get("class", "")]
    assert len(items) >= 4 and {el.attrs["pos"] for el in items} == {"center"}
    assert has(obs, tag="tspan", text=quoted(obs))
    obs = (await click(env, find(obs, cls="wheelnav-divWheel-spreader"))).observation
    return await click(env, find(obs, tag="tspan", text=quoted(obs)))


async def solve_click_menu_2(env: MiniWoBEnv, obs: Observation) -> StepResult:
    label = re.findall(r'"(.*?)"', obs.info["utterance"])[-1]
    obs = (await click(env, find(obs, tag="button", text="Menu"))).observation
    if not has(obs, tag="text", text=label):
        els = elements(obs)  # open the sub-menu: the item shown after its caret icon
        carets = [i for i, el in enumerate(els) if "ui-icon-caret-1-e" in el.attrs.get("class", "")]
        opener = els[carets[0] + 1]
        obs = (await click(env, opener)).observation
    return await click(env, find(obs, tag="text", text=label))


async def solve_social_media(env: MiniWoBEnv, obs: Observation) -> StepResult:
    goal = re.match(r'For the user (\S+), click on the "(.*)" button', obs.info["utterance"])
    user, label = goal.groups()  # type: ignore[union-attr]
    els = elements(obs)
    users = [i for i, el in enumerate(els) if el.attrs.get("class") == "username"] + [len(els)]
    start = next(i for i in users if els[i].text == user)
    post = els[start : users[users.index(start) + 1]]
    by_class = {el.attrs.get("class"): el for el in post}
    if label.lower() in by_class:  # Reply, Retweet and Like are icons
        return await click(env, by_class[label.lower()])
    obs = (await click(env, by_class["more"])).observation  # its menu says e.g. "Mute @leo"
    item = next(el for el in elements(obs) if el.tag == "li" and el.text.split(" @")[0] == label)
    return await click(env, item)


SOLVERS: dict[str, Solver] = {
    "click-test": solve_click_test,
    "click-test-2": solve_click_test_2,
    "click-button": solve_quoted_button,
    "click-dialog-2": solve_quoted_button,
    "click-link": solve_click_link,
    "click-dialog": solve_click_dialog,
    "click-tab": solve_click_tab,
    "focus-text-2": solve_focus_text_2,
    "click-button-sequence": solve_button_sequence,
    "click-checkboxes": solve_checkboxes,
    "click-checkboxes-transfer": solve_checkboxes,
    "click-option": solve_click_option,
    "click-collapsible": solve_click_collapsible,
    "click-scroll-list": solve_scroll_list,
    "enter-text": solve_enter_text,
    "enter-text-2": solve_enter_text,
    "enter-password": solve_enter_password,
    "login-user": solve_login_user,
    "read-table": solve_read_table,
    "click-tab-2": solve_click_tab_2,
    "click-collapsible-2": solve_click_collapsible_2,
    "navigate-tree": solve_navigate_tree,
    "email-inbox": solve_email_inbox,
    "use-autocomplete": solve_use_autocomplete,
    "search-engine": solve_search_engine,
    "click-pie": solve_click_pie,
    "click-menu-2": solve_click_menu_2,
    "social-media": solve_social_media,
}

# One seed per task, two for the multi-screen ones. click-pie uses seeds 0 and 2: in seed 1 the
# goal is the wheel's pre-selected item, which wheelnav never reports as clicked (a MiniWoB quirk
# that defeats a person too). click-menu-2 uses seeds whose goal names the item by its label (in
# the others the goal shows only an icon picture, which the utterance text loses).
SEEDS = {"click-pie": (0, 2), "click-menu-2": (1, 5)}
CASES = [
    f"{task}/{seed}"
    for task in SOLVERS
    for seed in SEEDS.get(task, (1, 2) if category(task) == N_SCREEN_N_STEP else (1,))
]


@pytest.fixture(scope="module")
async def env():
    # the solvers find elements by the annotated screen's SVG classes (click-pie's slices, click-menu-2's
    # caret), which the SR code's flat screen (the default, screen="code") shows as "SVG_CLASS"
    env = MiniWoBEnv(screen="annotated")
    yield env
    await env.close()


def test_solved_tasks_cover_the_three_categories() -> None:
    cats = [category(t) for t in SOLVERS]
    assert cats.count(ONE_SCREEN_ONE_STEP) >= 4
    assert cats.count(ONE_SCREEN_N_STEP) >= 4
    assert cats.count(N_SCREEN_N_STEP) >= 4


@pytest.mark.parametrize("task_id", CASES)
async def test_known_correct_actions_get_reward_1(env: MiniWoBEnv, task_id: str) -> None:
    obs = await env.reset(task_id)
    result = await SOLVERS[task_id.split("/")[0]](env, obs)
    assert result.done and result.reward == 1.0 and result.success is True, result.info
    assert result.observation.info["success"] is True
