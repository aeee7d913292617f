"""Handlers of examples/approval: a claim gets a ticket, an approved claim a payment reference."""

import hashlib


def submit(payload):
    ticket = "EXP-" + hashlib.sha256(f"{payload['employee']}:{payload['amount']}".encode()).hexdigest()[:6].upper()
    payload["_step_log"](f"claim {ticket}: {payload['employee']} asks for {payload['amount']:.2f}")
    return {"ticket": ticket}


def pay(payload):
    payload["_step_log"](f"paying {payload['amount']:.2f} on {payload['ticket']}")
    return {"reference": "PAY-" + payload["ticket"][4:]}


def register_handlers(registry):
    registry.register("expenses.Submit", submit)
    registry.register("expenses.Pay", pay)
