"""Devil's Advocate graph on a small fake shop that speaks WebArena's grammar.

The fake env renders WebArena-like screens (``[id] role 'name'`` lines, URL, tab) and
renumbers every element on each page load, as a real accessibility tree may, so that
backtracking has to remap ids. The scripted model's replies are listed in call order;
each comment names the node that makes the call.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from envs.base import ENV_CLASSES, Env, EnvError, Observation, StepResult, invalid
from envs.sessions import SESSIONS
from envs.webarena.interface import INTERFACE as WEBARENA
from envs.webarena.interface import site_intro
from graphs.devils_advocate import build_graph, result
from nodes.da.context import DAContext
from nodes.da.summarise import chunks
from nodes.runtime.llm import model_for

ORIGIN = "http://shop.test"
GOAL = "What is the color configuration of the picture frame I bought in Nov 2022?"

# url path -> (title, [(role, name, link target or None)])
PAGES: dict[str, tuple[str, list[tuple[str, str, str | None]]]] = {
    "/": ("One Stop Market", [("link", "My Account", "/account"), ("link", "Order History", "/orders")]),
    "/account": ("My Account", [("StaticText", "Contact Information: Emma Lopez", None)]),
    "/orders": (
        "My Orders",
        [
            ("link", "View Order 000000179", "/orders/179"),
            ("StaticText", "Nov 20, 2022", None),
            ("link", "View Order 000000175", "/orders/175"),
            ("StaticText", "Nov 3, 2022", None),
            ("link", "View Order 000000170", "/orders/170"),
            ("StaticText", "Oct 12, 2022", None),
        ],
    ),
    "/orders/179": ("Order 179", [("StaticText", "Bluetooth Speaker, Color: Black", None)]),
    "/orders/175": ("Order 175", [("StaticText", "Picture Frame, Color: Walnut Brown", None)]),
    "/orders/170": ("Order 170", [("StaticText", "Phone Case, Color: Red", None)]),
}


class FakeShop(Env):
    """Pages of PAGES; ids are 100 * (page loads so far) + position, so they change on every load."""

    name = "fakeshop"
    interface = WEBARENA  # it speaks WebArena's grammar and shows its kind of screen
    log: list[tuple[str, Any]] = []  # (kind, detail) of every reset, step and restore, for assertions
    gone: set[str] = set()  # paths a restore cannot reach (EnvError)

    def __init__(self) -> None:
        self.path, self.scroll, self.loads, self.back = "/", 0, 0, []

    def _load(self, path: str, scroll: int = 0) -> None:
        self.path, self.scroll, self.loads = path, scroll, self.loads + 1

    def _ids(self) -> dict[str, tuple[str, str, str | None]]:
        title, elements = PAGES[self.path]
        base = 100 * self.loads
        return {str(base + i): element for i, element in enumerate([("RootWebArea", title, None), *elements])}

    def _obs(self) -> Observation:
        lines = [f"URL: {ORIGIN}{self.path}", f"Tab 0 (current): {PAGES[self.path][0]}", ""]
        for i, (eid, (role, name, _)) in enumerate(self._ids().items()):
            lines.append(f"{'' if i == 0 else chr(9)}[{eid}] {role} '{name}'")
        if self.scroll:
            lines.append(f"(scrolled down {self.scroll})")
        return Observation(
            "\n".join(lines), url=ORIGIN + self.path, info={"goal": GOAL, "intro": site_intro(["shopping"], {})}
        )

    async def reset(self, task_id: str) -> Observation:
        self.check_task(task_id)
        self.log.append(("reset", task_id))
        self._load("/")
        return self._obs()

    async def step(self, action: str) -> StepResult:
        self.log.append(("step", action))
        verb = action.split(" ", 1)[0]
        arg = action[action.find("[") + 1 : action.rfind("]")] if "[" in action else ""
        if verb == "stop":
            success = "walnut" in arg.lower()
            return StepResult(self._obs(), float(success), True, success=success)
        if verb == "click":
            element = self._ids().get(arg)
            if element is None or element[2] is None:
                return invalid(self._obs(), f"no clickable element with id {arg}")
            self.back.append(self.path)
            self._load(element[2])
        elif verb == "scroll":
            self.scroll += 1
        elif verb == "go_back" and self.back:
            self._load(self.back.pop())
        elif verb != "note_down":
            return invalid(self._obs(), f"unsupported action {action}")
        return StepResult(self._obs(), 0.0, False)

    async def snapshot(self) -> dict[str, Any]:
        return {"url": ORIGIN + self.path, "scroll": self.scroll}

    async def restore(self, snapshot: dict[str, Any]) -> Observation:
        self.log.append(("restore", snapshot))
        if snapshot["url"].removeprefix(ORIGIN) in self.gone:
            raise EnvError(f"could not load {snapshot['url']}")
        self._load(snapshot["url"].removeprefix(ORIGIN), snapshot["scroll"])
        return self._obs()

    def task_ids(self, split: str | None = None) -> list[str]:
        return ["frame"]


@pytest.fixture(autouse=True)
def fake_shop(monkeypatch):
    monkeypatch.setitem(ENV_CLASSES, "fakeshop", f"{__name__}:FakeShop")
    FakeShop.log = []
    FakeShop.gone = set()


def write_script(tmp_path: Path, replies: list[str]) -> str:
    path = tmp_path / "script.jsonl"
    path.write_text("".join(json.dumps({"content": r}) + "\n" for r in replies), encoding="utf-8")
    return f"scripted:{path}"


async def run(spec: str, **options: Any) -> dict[str, Any]:
    g = build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": f"t-{spec}"}, "recursion_limit": 500}
    return await g.ainvoke({"task_id": "frame"}, config, context=DAContext(model=spec, env="fakeshop", **options))


def prompts_seen(spec: str) -> list[str]:
    """The last human message of every model call, in call order."""
    return [str(call["messages"][-1].content) for call in model_for(spec, 1.0, 512).calls]


def steps() -> list[str]:
    return [detail for kind, detail in FakeShop.log if kind == "step"]


PICTURE_FRAME = [
    "List:\n1. Click on 'Order History'.\n2. Open the order from Nov 2022.\n3. Read the frame's color.",  # plan
    "click [102]",  # act: Order History on the home page (load 1)
    "click [101]",  # remedy 1
    "scroll [down]",  # remedy 2
    "The action is to open the order history; it lists three orders.",  # describe
    "The action is to open the order history. YES",  # align
    "NO",  # complete: task
    "YES",  # complete: subtask 1 done
    "click [201]",  # act: order 179 on /orders (load 2)
    "click [203]",  # remedy 1: order 175
    "click [205]",  # remedy 2: order 170
    "The action is to open order 179: a bluetooth speaker, no picture frame.",  # describe
    "The action is to open order 179, which has no picture frame. NO",  # align -> backtrack
    "New element id is: [403]",  # map_element: order 175 on the reloaded /orders (load 4)
    "The action is to open order 175: a picture frame in Walnut Brown.",  # describe
    "YES",  # align
    "YES",  # complete: task
    "###Answer: Walnut Brown",  # answer
]


async def test_picture_frame_backtracks_remaps_and_stops_early(tmp_path):
    spec = write_script(tmp_path, PICTURE_FRAME)
    out = await run(spec)
    prompts = prompts_seen(spec)

    # The first answer is executed before its remedies, at both decision points.
    assert steps()[:2] == ["click [102]", "click [201]"]
    # Misaligned: back to the saved /orders state (URL restored), id 203 remapped to 403.
    assert ("restore", {"url": f"{ORIGIN}/orders", "scroll": 0}) in FakeShop.log
    assert "element id: 203" in prompts[13] and "[403] link 'View Order 000000175'" in prompts[13]
    assert out["backtracks"] == [
        {"episode": 1, "url": f"{ORIGIN}/orders", "action": "click [203]", "mapped_action": "click [403]"}
    ]
    assert steps()[2:] == ["click [403]", "stop [Walnut Brown]"]
    # The completed subtask advanced the plan: the second act prompt is on step 2.
    assert "And now I'm at this step: Open the order from Nov 2022." in prompts[8]
    # Task completion stops early: step 3 of the plan was never acted on, no call after the answer.
    assert len(prompts) == len(PICTURE_FRAME)
    assert not any("at this step: Read the frame's color" in p for p in prompts)
    assert out["success"] and out["answer"] == "Walnut Brown" and out["stop_reason"] == "task_completed"
    # The unused alternatives are still on the stack; remedies pop in the order proposed.
    assert [e["action"] for e in out["stack"]] == ["scroll [down]", "click [101]", "click [205]"]
    assert result(out) | {"plans": None} == {
        "success": True,
        "answer": "Walnut Brown",
        "stop_reason": "task_completed",
        "episodes": 1,
        "first_episode_actions": ["click [102]", "click [201]", "click [403]"],
        "last_episode_actions": ["click [102]", "click [201]", "click [403]"],
        "actions_first_episode": 3,
        "actions_last_episode": 3,
        "plan_revisions": 0,
        "plans": None,
        "backtracks": 1,
    }
    assert out["usage"]["model_calls"] == len(PICTURE_FRAME)


async def test_remedy_prompt_follows_the_first_answer(tmp_path):
    spec = write_script(tmp_path, PICTURE_FRAME)
    await run(spec)
    first_remedy = model_for(spec, 1.0, 512).calls[2]["messages"]
    assert [type(m).__name__ for m in first_remedy] == ["HumanMessage", "AIMessage", "HumanMessage"]
    assert first_remedy[1].content == "click [102]"
    # the paper's question, word for word (its "devil's advocate" follow-up), nothing added
    assert first_remedy[2].content == "If your answer above is not correct, instead, the next action should be:"


async def test_remedy_hint_is_an_option(tmp_path):
    spec = write_script(tmp_path, PICTURE_FRAME)
    await run(spec, remedy_hint=True)
    question = model_for(spec, 1.0, 512).calls[2]["messages"][2].content
    assert question == (
        "If your answer above is not correct, instead, the next action should be:\n"
        "(give one different action, in the same format)"
    )


async def test_empty_stack_reflects_and_starts_a_new_episode(tmp_path):
    spec = write_script(
        tmp_path,
        [
            "List:\n1. Click on 'My Account'.",  # plan
            "click [101]",  # act: My Account
            "click [102]",  # remedy: Order History
            "The action is to open the account page.",  # describe
            "NO",  # align -> pop the remedy, backtrack to / (reload: ids 3xx)
            "302",  # map_element
            "The action is to open the order history.",  # describe
            "NO",  # align -> the stack is empty
            "My Account was useless.\nList:\n1. Click on 'Order History'.\n2. Open order 175.",  # reflect
            "click [502]",  # act (episode 2, back at S_0 reloaded: ids 5xx)
            "click [501]",  # remedy
            "The action is to open the order history.",  # describe
            "YES",  # align
            "YES",  # complete: task
            "###Answer: unknown",  # answer
        ],
    )
    out = await run(spec, remedies=1)
    prompts = prompts_seen(spec)
    assert "Click on 'My Account'" in prompts[8] and "open the account page" in prompts[8]
    # the appendix's plan prompt with its failed-trials part, and nothing the appendix lacks
    assert prompts[8].endswith(
        "Past experience:\nEpisode 1:\n1. The action is to open the account page.\n"
        "2. Went back to http://shop.test/ to try an alternative action.\n"
        "3. The action is to open the order history.\n\n"
        "To be successful in generating a new plan, you need to provide a list (1, 2, 3, ...), in which each "
        "item is a natural language description of one playwright action that is necessary to complete the "
        "task (e.g., click on the 'Account' button; scroll down; use the search bar to search for iPhone 13). "
        "You should use the information from the past experiences to save unnecessary steps!"
    )
    assert "Notes taken" not in prompts[8] and "what went wrong" not in prompts[8]
    assert out["plans"] == [["Click on 'My Account'."], ["Click on 'Order History'.", "Open order 175."]]
    assert out["episode"] == 2
    assert out["episode_actions"] == [["click [101]", "click [302]"], ["click [502]"]]
    # The new episode restarted from S_0 (eq. 10): the env went back to the home page.
    assert FakeShop.log.count(("restore", {"url": f"{ORIGIN}/", "scroll": 0})) == 2
    assert "And now I'm at this step: Click on 'Order History'." in prompts[9]
    res = result(out)
    assert res["plan_revisions"] == 1 and res["first_episode_actions"] == ["click [101]", "click [302]"]
    assert res["last_episode_actions"] == ["click [502]"] and not res["success"]


async def test_revision_notes_and_review_are_options(tmp_path):
    replies = [
        "List:\n1. Click on 'My Account'.",  # plan
        "note_down [the account page has no orders]",  # act
        "The action is to note that down.",  # describe
        "NO",  # align -> the stack is empty
        "Review: wrong page.\nList:\n1. Click on 'Order History'.",  # reflect
        "note_down [again]",  # act (episode 2)
        "The action is to note again.",  # describe
        "NO",  # align -> the stack is empty, no episode left
    ]
    spec = write_script(tmp_path, replies)
    await run(spec, remedies=0, max_episodes=2, revision_notes=True, revision_review=True)
    reflect = prompts_seen(spec)[4]
    assert (
        "Past experience:\nEpisode 1:\n1. The action is to note that down.\n\n"
        "Notes taken in previous trials:\n1. the account page has no orders\n\n"
        "First review the actions executed and the notes taken above, and say in a few sentences what "
        "went wrong with the failed plan. Then give the new plan.\n\nTo be successful"
    ) in reflect


async def test_action_cap_ends_the_run(tmp_path):
    spec = write_script(
        tmp_path,
        [
            "List:\n1. Scroll down to the orders.\n2. Open the order.",  # plan
            "scroll [down]",  # act
            "The action is to scroll down.",  # describe
            "YES",  # align
            "NO",  # complete: task
            "NO",  # complete: subtask
            "scroll [down]",  # act
            "The action is to scroll down.",  # describe
            "YES",  # align
            "NO",  # complete: task
            "NO",  # complete: subtask -> cap reached, no further act
        ],
    )
    out = await run(spec, remedies=0, max_actions=2)
    assert out["actions"] == 2 and out["stop_reason"] == "max_actions"
    assert steps() == ["scroll [down]", "scroll [down]", "stop [Early stop: max_actions]"]
    assert out["usage"]["model_calls"] == 11 and not out["success"]
    # the early stop is the harness's answer, not the model's: its step says so (and export passes it on)
    assert [step.get("by", "model") for step in out["trajectory"]] == ["model", "model", "harness"]


async def test_plan_act_baseline_has_no_remedies_and_no_revision(tmp_path):
    spec = write_script(
        tmp_path,
        [
            "List:\n1. Click on 'My Account'.",  # plan
            "click [101]",  # act (no remedy asked)
            "The action is to open the account page.",  # describe
            "NO",  # align -> empty stack, plan revision off -> finish
        ],
    )
    out = await run(spec, backtracking=False, plan_revision=False)
    assert not any(p.startswith("If your answer above") for p in prompts_seen(spec))
    assert out["stop_reason"] == "plan_failed" and out["usage"]["model_calls"] == 4
    assert result(out)["plan_revisions"] == 0 and out["episode_actions"] == [["click [101]"]]


async def test_with_reasks_malformed_replies_become_feedback(tmp_path):
    spec = write_script(
        tmp_path,
        [
            "Sure, I can help with that.",  # plan: no list -> feedback
            "List:\n1. Click on 'Order History'.",  # plan
            "I would look around first.",  # act: no action -> feedback
            "click [102]",  # act
            "The action is to open the order history.",  # describe
            "Probably.",  # align: no verdict -> feedback
            "YES",  # align
            "YES",  # complete: task
            "Walnut Brown",  # answer without ###Answer -> feedback
            "###Answer: Walnut Brown",  # answer
        ],
    )
    out = await run(spec, remedies=0, reasks=2)  # the paper re-asks never (reasks=0, the default)
    calls = model_for(spec, 1.0, 512).calls
    for index in (1, 3, 6, 9):
        assert calls[index]["messages"][-1].content.startswith("Your answer could not be used")
    assert steps() == ["click [102]", "stop [Walnut Brown]"] and out["success"]


async def test_an_action_the_env_refuses_is_not_aligned(tmp_path):
    spec = write_script(
        tmp_path,
        [
            "List:\n1. Click on 'Order History'.",  # plan
            "click [999]",  # act: no such element -> env feedback, no describe/align call
            "List:\n1. Click on 'Order History'.",  # reflect
            "click [102]",  # act (episode 2: still on S_0, so no backtrack and the same ids)
            "The action is to open the order history.",  # describe
            "YES",  # align
            "YES",  # complete: task
            "###Answer: none",  # answer
        ],
    )
    out = await run(spec, remedies=0, max_episodes=2)
    assert out["history"][0]["text"].startswith("The action click [999] could not be executed: no clickable")
    assert not any(kind == "restore" for kind, _ in FakeShop.log)
    assert out["episode_actions"] == [["click [999]"], ["click [102]"]] and out["stop_reason"] == "task_completed"


async def test_long_screens_are_summarised_first(tmp_path):
    budget = 60
    home = FakeShop()
    home._load("/")
    home_parts = len(chunks(home._obs().text, budget))
    home._load("/orders")
    orders_parts = len(chunks(home._obs().text, budget))
    spec = write_script(
        tmp_path,
        ["SUMMARY-HOME [102]"] * home_parts  # start: summarise S_0
        + ["List:\n1. Click on 'Order History'.", "click [102]"]  # plan, act
        + ["SUMMARY-ORDERS"] * orders_parts  # execute: summarise S_1
        + ["The action is to open the order history.", "NO"],  # describe, align -> finish
    )
    out = await run(spec, observation_budget=budget, remedies=0, plan_revision=False)
    prompts = prompts_seen(spec)
    assert home_parts > 1 and "part 1 of" in prompts[0]
    assert "SUMMARY-HOME" in prompts[home_parts] and "My Account" not in prompts[home_parts]
    describe_prompt = prompts[home_parts + 2 + orders_parts]
    assert "SUMMARY-ORDERS" in describe_prompt and "View Order" not in describe_prompt
    summary = out["current"]["summary"]
    assert summary.startswith("SUMMARY-ORDERS") and len(summary) <= budget
    assert out["stack"] == [] and out["previous"]["observation"].startswith("URL: http://shop.test/\n")


async def test_a_resumed_run_rebuilds_the_env_and_remaps_the_pending_action(tmp_path):
    spec = write_script(
        tmp_path,
        PICTURE_FRAME[:11]
        + ["New element id is: [101]"]  # execute after the resume: order 179 on the rebuilt /orders (load 1)
        + PICTURE_FRAME[11:13]  # describe, align NO -> backtrack (load 3)
        + ["[303]"]  # map_element: order 175
        + PICTURE_FRAME[14:],
    )
    g = build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t-resume"}, "recursion_limit": 500}
    context = DAContext(model=spec, env="fakeshop")
    await g.ainvoke({"task_id": "frame"}, config, context=context, interrupt_before=["execute"])
    paused = await g.ainvoke(None, config, context=context, interrupt_before=["execute"])
    assert paused["popped"]["action"] == "click [201]" and steps() == ["click [102]"]
    await SESSIONS.release("t-resume")  # the process died: the live env is gone

    out = await g.ainvoke(None, config, context=context)
    # The env was rebuilt from the snapshot in state; the pending click went through element mapping.
    orders = ("restore", {"url": f"{ORIGIN}/orders", "scroll": 0})
    assert FakeShop.log == [
        ("reset", "frame"),
        ("step", "click [102]"),
        orders,  # the rebuild
        ("step", "click [101]"),
        orders,  # the backtrack
        ("step", "click [303]"),
        ("step", "stop [Walnut Brown]"),
    ]
    assert "element id: 201" in prompts_seen(spec)[11]
    assert out["episode_actions"] == [["click [102]", "click [101]", "click [303]"]]
    assert out["success"] and out["answer"] == "Walnut Brown"
    assert out["usage"]["model_calls"] == len(PICTURE_FRAME) + 1


async def test_a_state_that_cannot_be_restored_drops_its_alternative(tmp_path):
    FakeShop.gone = {"/"}
    spec = write_script(
        tmp_path,
        [
            "List:\n1. Click on 'Order History'.",  # plan
            "click [102]",  # act
            "click [101]",  # remedy
            "The action is to open the order history.",  # describe
            "NO",  # align -> the remedy's home page cannot be restored -> empty stack -> finish
        ],
    )
    out = await run(spec, remedies=1, plan_revision=False)
    assert out["history"][-1]["text"].startswith("Could not go back to http://shop.test/: could not load")
    assert out["stop_reason"] == "plan_failed" and out["usage"]["model_calls"] == 5
    # finish found the env in an unknown place and restored it from state before stopping.
    assert FakeShop.log[-3:] == [
        ("restore", {"url": f"{ORIGIN}/", "scroll": 0}),
        ("restore", {"url": f"{ORIGIN}/orders", "scroll": 0}),
        ("step", "stop [Early stop: plan_failed]"),
    ]
