# gym 0.26.2 passive env checker on an env written in the old 4-tuple step API (line 225)
import gym
from gym.utils.passive_env_checker import env_step_passive_checker


class OldApiEnv(gym.Env):
    observation_space = gym.spaces.Box(-1.0, 1.0, (2,))
    action_space = gym.spaces.Discrete(2)

    def step(self, action):
        return self.observation_space.sample(), 0.0, False, {}


env_step_passive_checker(OldApiEnv(), 0)
print("OK")
