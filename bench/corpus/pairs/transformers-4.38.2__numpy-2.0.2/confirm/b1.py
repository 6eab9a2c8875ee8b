# transformers 4.38.2 audio_utils.fram_wave(waveform, center=False): the last short frame is zero-
# padded with
# np.lib.pad (line 653)
import numpy as np
from transformers.audio_utils import fram_wave

frames = fram_wave(
    np.arange(1000, dtype=np.float32), hop_length=160, fft_window_size=400, center=False
)
print(frames.shape)
print("OK")
