"""One file per mechanism family: calibration, refusals, audits and mutation tests."""
