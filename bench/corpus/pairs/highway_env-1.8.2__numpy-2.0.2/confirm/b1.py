# highway-env 1.8.2 utils.distance_to_circle for a ray that misses the circle (no real root): the
# distance is np.infty (utils.py line 337)
import numpy as np
from highway_env.utils import distance_to_circle

print(distance_to_circle(np.array([[5.0], [5.0]]), 1.0, np.array([[1.0], [0.0]])))
print("OK")
