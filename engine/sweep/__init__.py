"""Sweeps: grids of runs over seeds and settings, run by a process pool, Ray or the batched trainer."""
