# gym 0.26.2 passive_env_checker.py line 237: its function stops at line 233 first under numpy 2,
# so the exact expression of line 237 is run with the same receiver types (truncated: a bool).
import gym.utils.passive_env_checker as m

truncated = False
isinstance(truncated, (bool, m.np.bool8))
print("OK")
