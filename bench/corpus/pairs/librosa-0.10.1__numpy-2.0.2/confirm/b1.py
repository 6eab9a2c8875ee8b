# librosa 0.10.1 util.stack along axis 0 (F-ordered common-dtype buffer), line 2219
import librosa
import numpy as np

a = np.zeros(4, dtype=np.float32)
b = np.ones(4, dtype=np.float64)
print(librosa.util.stack([a, b], axis=0).dtype)
# the np.complex_ annotations of lines 2503/2516/2524 are strings here (from __future__ import
# annotations):
print(librosa.util.phasor(np.float64(0.5)))
print("OK")
