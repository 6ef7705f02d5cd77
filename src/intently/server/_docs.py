"""``/docs``: the API reference as one self-contained HTML page, built from ``/openapi.json``.

FastAPI's own ``/docs`` (Swagger UI) and ``/redoc`` load their JavaScript, CSS, fonts and
icon from CDNs at run time: against the offline principle, and blank on a machine without
internet. No well-kept PyPI package ships a Swagger UI that reads OpenAPI 3.1 (FastAPI's
schema version; ``swagger-ui-bundle`` is at Swagger UI 4, which refuses 3.1), so the page is
rendered here: every route with its parameters, body, answers and the schemas they name,
with no script and nothing fetched from anywhere (its CSP allows only its own inline style).
The machine-readable schema stays at ``/openapi.json`` for clients and code generators.
"""

from __future__ import annotations

import json
import re
from html import escape
from typing import Any

from fastapi import FastAPI
from starlette.responses import HTMLResponse, RedirectResponse

__all__ = ["DOCS_HEADERS", "install_docs", "render_reference"]

_METHODS = ("get", "post", "put", "patch", "delete")

#: Nothing but the page's own inline style may load; it cannot be framed.
DOCS_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
        "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}

_STYLE = """
body{font:15px/1.5 system-ui,sans-serif;margin:0 auto;max-width:72rem;padding:1rem 2rem;color:#1d2430}
code,pre{font-family:ui-monospace,monospace;font-size:13px}
h2{border-bottom:1px solid #ccd;margin-top:2rem}
section.op{border:1px solid #dde;border-radius:6px;margin:1rem 0;padding:.5rem 1rem}
.verb{display:inline-block;min-width:4.5rem;font-weight:700;text-transform:uppercase}
.get{color:#1f6f3f}.post{color:#1d4f91}.patch{color:#8a5a00}.delete{color:#a32020}.put{color:#6b3fa0}
table{border-collapse:collapse;margin:.3rem 0}td,th{border:1px solid #dde;padding:.2rem .5rem;text-align:left;vertical-align:top}
nav ul{columns:2}
"""


def install_docs(app: FastAPI) -> None:
    """Serve the reference at ``/docs``; ``/redoc`` (FastAPI's other CDN page) leads there."""

    async def docs() -> HTMLResponse:
        return HTMLResponse(render_reference(app.openapi()), headers=DOCS_HEADERS)

    async def redoc() -> RedirectResponse:
        return RedirectResponse("/docs", status_code=308)

    app.add_api_route("/docs", docs, methods=["GET"], include_in_schema=False)
    app.add_api_route("/redoc", redoc, methods=["GET"], include_in_schema=False)


def render_reference(spec: dict[str, Any]) -> str:
    """The whole page for an OpenAPI document (every value escaped: descriptions are text)."""
    info = spec.get("info", {})
    title = f"{info.get('title', 'API')} {info.get('version', '')}".strip()
    ops = [
        (path, verb, item[verb]) for path, item in spec.get("paths", {}).items() for verb in _METHODS if verb in item
    ]
    tags: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, verb, op in ops:
        tags.setdefault((op.get("tags") or ["other"])[0], []).append((path, verb, op))
    out = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)} · API reference</title><style>{_STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p>{escape(str(info.get('description', '')))}</p>",
        '<p>The machine-readable schema (OpenAPI) is at <a href="/openapi.json"><code>/openapi.json</code></a>. '
        "Every route but <code>/v1/health</code> needs <code>Authorization: Bearer &lt;token&gt;</code>; "
        "errors are <code>application/problem+json</code>.</p>",
        '<nav aria-label="Routes"><ul>',
    ]
    for path, verb, _op in ops:
        out.append(
            f'<li><a href="#{_anchor(verb, path)}"><span class="verb {verb}">{verb}</span> {escape(path)}</a></li>'
        )
    out.append("</ul></nav>")
    for tag, members in tags.items():
        out.append(f"<h2>{escape(tag)}</h2>")
        out.extend(_operation(path, verb, op) for path, verb, op in members)
    schemas = spec.get("components", {}).get("schemas", {})
    if schemas:
        out.append("<h2>Schemas</h2>")
        out.extend(_schema_section(name, schema) for name, schema in schemas.items())
    out.append("</body></html>")
    return "\n".join(out)


def _anchor(verb: str, path: str) -> str:
    return verb + "-" + re.sub(r"[^A-Za-z0-9]+", "-", path).strip("-")


def _operation(path: str, verb: str, op: dict[str, Any]) -> str:
    parts = [
        f'<section class="op" id="{_anchor(verb, path)}">',
        f'<h3><span class="verb {verb}">{verb}</span> <code>{escape(path)}</code></h3>',
    ]
    summary = op.get("summary")
    if summary:
        parts.append(f"<p><strong>{escape(str(summary))}</strong></p>")
    if op.get("description"):
        parts.append(f"<p>{escape(str(op['description']))}</p>")
    params = op.get("parameters", [])
    if params:
        parts.append("<table><caption>Parameters</caption><tr><th>name</th><th>in</th><th>type</th><th></th></tr>")
        for p in params:
            schema = p.get("schema", {})
            need = "required" if p.get("required") else ""
            note = p.get("description") or schema.get("description") or ""
            parts.append(
                f"<tr><td><code>{escape(str(p.get('name')))}</code></td><td>{escape(str(p.get('in')))}</td>"
                f"<td>{escape(_type(schema))}</td><td>{escape(need)} {escape(str(note))}</td></tr>"
            )
        parts.append("</table>")
    body = op.get("requestBody")
    if body:
        for media, content in body.get("content", {}).items():
            need = " (required)" if body.get("required") else " (optional)"
            parts.append(f"<p>Body{need}: <code>{escape(media)}</code> {_linked(_type(content.get('schema', {})))}</p>")
    answers = op.get("responses", {})
    if answers:
        parts.append("<table><caption>Answers</caption>")
        for code, answer in answers.items():
            parts.append(f"<tr><td>{escape(str(code))}</td><td>{escape(str(answer.get('description', '')))}</td></tr>")
        parts.append("</table>")
    parts.append("</section>")
    return "\n".join(parts)


def _schema_section(name: str, schema: dict[str, Any]) -> str:
    parts = [f'<section class="op" id="schema-{escape(name)}"><h3><code>{escape(name)}</code></h3>']
    if schema.get("description"):
        parts.append(f"<p>{escape(str(schema['description']))}</p>")
    props = schema.get("properties", {})
    if props:
        required = set(schema.get("required", []))
        parts.append("<table><tr><th>field</th><th>type</th><th></th></tr>")
        for field, sub in props.items():
            need = "required" if field in required else ""
            note = str(sub.get("description", ""))
            parts.append(
                f"<tr><td><code>{escape(field)}</code></td><td>{_linked(_type(sub))}</td>"
                f"<td>{escape(need)} {escape(note)}</td></tr>"
            )
        parts.append("</table>")
        if schema.get("additionalProperties") is False:
            parts.append("<p>Unknown fields are refused (422).</p>")
    elif "enum" in schema or "type" in schema:
        parts.append(f"<p>{escape(_type(schema))}</p>")
    parts.append("</section>")
    return "\n".join(parts)


def _linked(text: str) -> str:
    """``text`` escaped, with a schema name (written ``#Name``) turned into a link to it."""
    words = []
    for word in escape(text).split(" "):
        if word.startswith("#") and len(word) > 1:
            words.append(f'<a href="#schema-{word[1:]}">{word[1:]}</a>')
        else:
            words.append(word)
    return " ".join(words)


def _type(schema: dict[str, Any]) -> str:
    """A short reading of a JSON schema: ``string ≤ 40``, ``array of #Name``, ``A | null``."""
    if "$ref" in schema:
        return "#" + str(schema["$ref"]).rsplit("/", 1)[-1]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " | ".join(_type(s) for s in schema[key])
    if "allOf" in schema:
        return " & ".join(_type(s) for s in schema["allOf"])
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    kind = str(schema.get("type", "any"))
    if kind == "array":
        kind = "array of " + _type(schema.get("items", {}))
    limits = []
    for key, sign in (("minLength", "length ≥"), ("maxLength", "length ≤"), ("minimum", "≥"), ("maximum", "≤")):
        if key in schema:
            limits.append(f"{sign} {schema[key]}")
    if "pattern" in schema:
        limits.append(f"matching {schema['pattern']}")
    return kind + (f" ({', '.join(limits)})" if limits else "")
