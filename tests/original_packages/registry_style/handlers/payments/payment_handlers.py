"""Payment handlers, registered by module path with a timeout.

The first attempt of a charge hangs (a stuck payment gateway); the
registration's ``timeout_ms`` ends it so the retry can succeed.
"""

import time

from handlers.common.money import cents

CHARGE_TIMEOUT_MS = 1500


def charge(payload: dict) -> dict:
    attempt = payload["_retry_count"]
    if attempt == 0:
        payload["_step_log"]("gateway is slow", level="warning")
        time.sleep(CHARGE_TIMEOUT_MS / 1000 * 3)
    return {"receipt": f"{payload['number']}/{cents(payload['amount'])}", "attempt": attempt}


def register_handlers(runner) -> None:
    runner.register_handler(
        facet_name="billing.Charge",
        module_uri="handlers.payments.payment_handlers",
        entrypoint="charge",
        version="2.0.0",
        timeout_ms=CHARGE_TIMEOUT_MS,
        requirements=["requests>=2.28"],
    )
