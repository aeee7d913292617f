"""Money helpers shared by the billing handlers."""


def cents(amount: int) -> str:
    return f"{amount // 100}.{amount % 100:02d}"
