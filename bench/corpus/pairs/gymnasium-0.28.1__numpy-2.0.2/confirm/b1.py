# gymnasium 0.28.1 acrobot.py line 452 (rk4's scalar-state branch; rk4 with a scalar state fails
# later
# on any numpy, so the exact expression of line 452 is run with the module's own np and t).
import gymnasium.envs.classic_control.acrobot as m

t = [0.0, 0.1, 0.2]
yout = m.np.zeros((len(t),), m.np.float_)
print("OK")
