"""The dpopt test suite: one folder per package of dpopt, plus contracts/ and end_to_end/."""
