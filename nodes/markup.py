"""The HTML pieces every ``introspect view`` page shares: its style sheet and how a method's
structures (plans, reflections, experiences) are drawn as tables.

Kept below the app and the method graphs so that the trajectory page (introspect.view) and a
method's own page of its training threads (``Training.page``: AutoPlan's in
nodes.autoplan.training_view) draw with the same pieces, and a method never imports the app.
"""

from __future__ import annotations

import html
import json
from typing import Any

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;background:#f6f6f8;color:#222}
header{background:#2d2a5a;color:#fff;padding:14px 24px}header h1{margin:0 0 4px;font-size:20px}
main{padding:16px 24px;max-width:1200px}.step,.iteration{background:#fff;border:1px solid #ddd;border-radius:6px;
margin:12px 0;padding:12px 16px}.step h2,.iteration h2{font-size:16px;margin:0 0 6px}.plan{margin:8px 0}
.action{font-family:monospace;background:#eef;padding:2px 6px;border-radius:3px}.reward{float:right;font-weight:bold}
.refused{color:#a00}.mark{margin:8px 0;padding:8px 12px;border-left:4px solid #c60;background:#fff4e5}
.mark.backtrack{border-color:#c00;background:#fdecec}.cols{display:flex;gap:16px;flex-wrap:wrap}
.cols>div{flex:1 1 420px;min-width:0}pre{white-space:pre-wrap;background:#fafafa;border:1px solid #eee;
padding:6px;max-height:320px;overflow:auto;font-size:12px}img.shot{max-width:100%;border:1px solid #ccc}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ddd;padding:3px 6px;vertical-align:top;
text-align:left}details{margin:4px 0}summary{cursor:pointer;font-weight:600}
details.calls{background:#f3f1fb;border:1px solid #dcd8f0;border-radius:4px;padding:4px 8px}
details.call{margin-left:12px}details.call summary{font-weight:normal}.message{margin:4px 0 4px 12px}
.message.reply{border-left:3px solid #2d2a5a;padding-left:6px}.unrecorded{color:#666;font-style:italic}
.pair{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:12px}.heads h2{font-size:15px;margin:6px 0 2px}
"""


def structure_html(value: Any) -> str:
    """A structure as HTML: a list of records as a table, a record as key/value rows, text as a block."""
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        keys = list(dict.fromkeys(k for v in value for k in v))
        head = "".join(f"<th>{html.escape(k)}</th>" for k in keys)
        rows = "".join("<tr>" + "".join(f"<td>{_cell(v.get(k))}</td>" for k in keys) + "</tr>" for v in value)
        return f"<table><tr>{head}</tr>{rows}</table>"
    if isinstance(value, dict) and value:
        return (
            "<table>"
            + "".join(f"<tr><th>{html.escape(str(k))}</th><td>{_cell(v)}</td></tr>" for k, v in value.items())
            + "</table>"
        )
    if value in (None, "", [], {}):
        return "<i>empty</i>"
    return f"<pre>{html.escape(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))}</pre>"


def _cell(value: Any) -> str:
    """A table cell: a flat list as comma-separated text, a nested structure as its own table."""
    if isinstance(value, list) and not any(isinstance(v, (dict, list)) for v in value):
        return html.escape(", ".join(str(v) for v in value))
    if isinstance(value, (dict, list)):
        return structure_html(value)
    return html.escape("" if value is None else str(value))
