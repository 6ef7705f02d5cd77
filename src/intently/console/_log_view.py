"""The log view: recent operations, verification, the latest checkpoint, inclusion proofs.

Everything here is a read, so every control is a GET form: it works without JavaScript and
needs no CSRF token. The proof shown has been checked in this request with
:func:`~intently.log.verify_inclusion_proof`, which recomputes the leaf from the operation.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from starlette.requests import Request
from starlette.responses import HTMLResponse

from ..core.errors import IntentlyError
from ..log import verify_inclusion_proof
from ._web import page_for, render

__all__ = ["router"]

router = APIRouter()

PAGE = 50


@router.get("/ns/{namespace}/log", response_class=HTMLResponse)
def log_page(
    request: Request,
    namespace: str,
    before: Annotated[int | None, Query(ge=1, le=2**53)] = None,
    verify: bool = False,
    proof: Annotated[int | None, Query(ge=1, le=2**53)] = None,
) -> HTMLResponse:
    page = page_for(request, namespace)
    log = page.view.log
    size = log.size(page.namespace)
    top = min(before - 1, size) if before is not None else size
    low = max(0, top - PAGE)
    ops = list(reversed(log.read(page.namespace, after=low, limit=top - low))) if top > 0 else []
    checkpoint = log.latest_checkpoints().get(page.namespace)
    context: dict[str, Any] = {
        "view": "log",
        "size": size,
        "ops": ops,
        "newer": page.url("log", before=str(top + PAGE + 1)) if top < size else None,
        "older": page.url("log", before=str(low + 1)) if low > 0 else None,
        "checkpoint": checkpoint.to_json() if checkpoint else None,
        "report": log.verify([page.namespace]).streams[0] if verify else None,
        "proof": None,
        "proof_error": None,
        "proof_seq": proof,
    }
    if proof is not None:
        try:
            doc = log.inclusion_proof(page.namespace, proof)
            verify_inclusion_proof(doc)
            context["proof"] = doc
        except IntentlyError as exc:
            context["proof_error"] = f"{type(exc).__name__}: {exc}"
    return render(page, request, "log.html", context)
