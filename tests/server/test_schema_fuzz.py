"""A bounded schemathesis run over the published OpenAPI schema, against the real server.

Every operation gets a few generated requests (derandomized, so the run is reproducible).
Checks: no 5xx, documented status codes and content types, responses matching the schema.
``positive_data_acceptance`` is left out on purpose: the library validates more than a JSON
Schema can say (clock-time triggers, RFC 3339 dates, "nothing to change"), and answers such
input with a documented 422 problem.
"""

from __future__ import annotations

from typing import Any

import httpx
import schemathesis  # the dev extra installs it; a missing fuzzer must fail, not skip

from intently import Intently

from .conftest import serve


def test_every_operation_survives_generated_requests(ix: Intently) -> None:
    from hypothesis import HealthCheck, given, settings
    from schemathesis.specs.openapi.checks import positive_data_acceptance

    ix.goals.add("Ship the billing API v2", priority="HIGH")
    with serve(ix) as api:
        token = api.token("user:alice")
        schema = schemathesis.openapi.from_dict(httpx.get(f"{api.url}/openapi.json").json())
        failures: list[str] = []
        operations = 0
        for result in schema.get_all_operations():
            operation = result.ok()
            operations += 1

            @settings(
                max_examples=5, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
            )
            @given(case=operation.as_strategy())
            def run(case: Any) -> None:
                case.call_and_validate(
                    base_url=api.url,
                    headers={"Authorization": f"Bearer {token}"},
                    excluded_checks=[positive_data_acceptance],
                )

            try:
                run()
            except (Exception, BaseExceptionGroup) as exc:  # a failure group: collect, report all
                failures.append(f"{operation.label}: {str(exc)[:300]}")
    assert operations >= 25
    assert failures == []
