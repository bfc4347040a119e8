"""The dpopt test suite: unit, backends, mechanisms, privacy and end-to-end tests."""
