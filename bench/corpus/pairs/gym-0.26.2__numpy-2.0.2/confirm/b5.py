# gym 0.26.2 Acrobot-v1 stepped once: AcrobotEnv.step -> rk4 with a vector state (line 448)
from gym.envs.classic_control.acrobot import AcrobotEnv

env = AcrobotEnv()
env.reset(seed=0)
env.step(1)
print("OK")
