"""Tests of dpopt.datasets: the shipped Adult data and the synthetic generators."""
