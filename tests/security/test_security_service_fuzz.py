"""Generated hostile requests against the app (issue 11 item 5): schemathesis in negative mode (data
the OpenAPI document forbids). Never a 5xx; every answer conforms to the document. Lone surrogates
and NUL, which schemathesis cannot send, are in test_security_service_text_fuzz.py (a module of
its own, so that Hypothesis prints its falsifying examples: schemathesis silences the printer of
the modules that import it)."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

from guard.service import create_app
from guard.state import MemoryStore

# /metrics, /healthz and /readyz take no input: nothing negative to generate for them.
negative = schemathesis.openapi.from_asgi("/openapi.json", create_app(store=MemoryStore(), token="")).include(path_regex="^/v1/")
negative.config.generation.update(modes=[GenerationMode.NEGATIVE], allow_x00=True)


@negative.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)
def test_requests_the_document_forbids_never_get_a_server_error(case: schemathesis.Case) -> None:
    case.call_and_validate(checks=[not_a_server_error, content_type_conformance, response_schema_conformance])
