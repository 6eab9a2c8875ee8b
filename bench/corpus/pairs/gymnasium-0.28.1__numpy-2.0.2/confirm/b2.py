# gymnasium 0.28.1 Acrobot-v1 stepped once: AcrobotEnv.step -> rk4 with a vector state (line 454)
import gymnasium as gym

env = gym.make("Acrobot-v1")
env.reset(seed=0)
env.step(1)
print("OK")
