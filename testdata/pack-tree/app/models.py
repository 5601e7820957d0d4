from dataclasses import dataclass


@dataclass
class Account:
    """One account: a name and a balance in cents."""

    name: str
    cents: int

    def deposit(self, cents):
        """Adds `cents`."""
        self.cents += cents

    def _check(self):
        assert self.cents >= 0


# Accounts every ledger starts with.
DEFAULTS = [Account("cash", 0), Account("bank", 0)]
