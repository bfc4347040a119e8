"""Privacy of the whole program: neighbours, pre-data declarations, ledgers, guards."""
