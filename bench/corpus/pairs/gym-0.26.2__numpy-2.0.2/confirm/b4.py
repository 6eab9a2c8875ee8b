# gym 0.26.2 acrobot.py line 446 (rk4's scalar-state branch; rk4 with a scalar state fails later at
# line 465 on any numpy, so the exact expression of line 446 is run with the module's own np and t).
import gym.envs.classic_control.acrobot as m

t = [0.0, 0.1, 0.2]
yout = m.np.zeros((len(t),), m.np.float_)
print("OK")
