# gym 0.26.2 passive env checker on a new-API env (5-tuple step), the default checker of gym.make
# (line 233)
import gym

env = gym.make("CartPole-v1")  # wraps in PassiveEnvChecker
env.reset(seed=0)
env.step(env.action_space.sample())
print("OK")
