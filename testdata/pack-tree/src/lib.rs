//! The ledger: accounts and transfers between them.

use std::collections::BTreeMap;

mod util;

/// An account's balance, in cents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Balance(pub i64);

/// All accounts by name.
pub struct Ledger {
    accounts: BTreeMap<String, Balance>,
}

impl Ledger {
    /// An empty ledger.
    pub fn new() -> Self {
        Ledger {
            accounts: BTreeMap::new(),
        }
    }

    /// Moves `cents` from one account to another; false if `from` has too little.
    pub fn transfer(&mut self, from: &str, to: &str, cents: i64) -> bool {
        let have = self.balance(from).0;
        if have < cents {
            return false;
        }
        self.accounts.insert(from.to_owned(), Balance(have - cents));
        let dest = self.balance(to).0;
        self.accounts.insert(to.to_owned(), Balance(dest + cents));
        true
    }

    /// The balance of `name` (zero when unknown).
    pub fn balance(&self, name: &str) -> Balance {
        self.accounts.get(name).copied().unwrap_or(Balance(0))
    }
}

fn audit(ledger: &Ledger) -> i64 {
    ledger.accounts.values().map(|b| b.0).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfer_moves_money() {
        let mut l = Ledger::new();
        l.accounts.insert("a".into(), Balance(10));
        assert!(l.transfer("a", "b", 4));
        assert_eq!(audit(&l), 10);
    }
}
