"""Sweeps: grids of runs over seeds and settings, run by a process pool, Ray or the batched trainer.

spec.py     the [sweep] table, its members (arms × grid × seeds) and the group directory
events.py   MemberStarted, MemberProgressed, MemberEnded: what members report
member.py   one member: its spec, its run, and how it goes on after an interruption
task.py     what one worker task runs (batched.py on a GPU, else members one by one)
drain.py    the loop that turns a backend's messages and tasks into events
pool.py     Sweep and the local process pool; ray.py the Ray backend
compare.py  the arm ratios; report/ the tables

A member's results.csv row and the seed statistics are the records' (engine/records/results.py, stats.py).
"""
