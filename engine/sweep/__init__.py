"""Sweeps: grids of runs over seeds and settings, run by a process pool, Ray or the batched trainer.

spec.py     the [sweep] table, its members (arms × grid × seeds) and the group directory
results.py  a member's results.csv row, written once for every backend
events.py   MemberStarted, MemberProgressed, MemberEnded: what members report
member.py   one member: its spec, its run, and how it goes on after an interruption
task.py     what one worker task runs (batched.py on a GPU, else members one by one)
drain.py    the loop that turns a backend's messages and tasks into events
pool.py     Sweep and the local process pool; ray.py the Ray backend
stats.py    medians and IQRs per cell; report.py the tables; compare.py the arm ratios
"""
