from tests.console.conftest import Served
from tests.console.test_steering import _csrf, _landed


def test_an_expired_risk_can_be_closed_out_from_the_board(fresh: Served) -> None:
    """RFC-0013 section 8: an expired (escalated) risk leaves every bundle once completed; the
    board offered Complete only on active intents, so the console could not do it."""
    risk = fresh.ix.goals.add("Domain registration lapses", type="RISK", priority="HIGH", due="2026-03-05")
    fresh.ix.runtime.clock.advance("4d")  # type: ignore[attr-defined]
    fresh.ix.goals.organise()
    assert str(fresh.ix.goals.get(risk.id).state) == "EXPIRED"
    with fresh.login("user:alice") as alice:
        board = alice.get("/ns/proj/goals").text
        assert 'aria-label="Complete: Domain registration lapses"' in board
        form = {"version": str(fresh.ix.goals.get(risk.id).version), "csrf": _csrf(board)}
        done, _ = _landed(alice, alice.post(f"/ns/proj/goals/{risk.id}/complete", data=form))
        assert done.startswith("ok: Completed")
    assert str(fresh.ix.goals.get(risk.id).state) == "COMPLETED"
