"""Step marks for the soak driver: on stderr (stdout must be the same traced
and untraced), the step reached and the time on the trace's clock
(CLOCK_REALTIME, as CUPTI's), so the driver can cut the trace into windows
of steps and see whether each window costs the same."""
import sys
import time

EVERY = 100


def mark(step):
    """Call after step `step` (counting from 1) has been issued and waited for."""
    if step % EVERY == 0:
        print(f"soak-mark {step} {time.time_ns()}", file=sys.stderr, flush=True)
