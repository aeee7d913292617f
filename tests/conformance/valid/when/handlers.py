def classify(p):
    a = p["amount"]
    tier = "neg" if a < 0 else ("small" if a <= 1000 else "large")
    return {"tier": tier, "score": a // 100}

def approve(p):
    return {"ref": f"approved-{p['amount']}"}

def review(p):
    return {"ref": f"review-{p['reason']}-{p['amount']}"}

def reject(p):
    return {"ref": "rejected-" + p["reason"]}

def register_handlers(registry):
    registry.register("route.Classify", classify)
    registry.register("route.Approve", approve)
    registry.register("route.Review", review)
    registry.register("route.Reject", reject)
