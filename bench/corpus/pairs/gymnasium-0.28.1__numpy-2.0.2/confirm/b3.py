# gymnasium 0.28.1 experimental ReshapeObservationV0 built on CartPole (Box obs (4,) -> (2, 2)),
# line 358
import gymnasium as gym
from gymnasium.experimental.wrappers import ReshapeObservationV0

env = ReshapeObservationV0(gym.make("CartPole-v1"), (2, 2))
print(env.observation_space.shape)
print("OK")
