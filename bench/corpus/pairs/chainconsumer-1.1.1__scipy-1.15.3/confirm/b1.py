# chainconsumer 1.1.1: `import chainconsumer` -> chainconsumer/__init__ line 3 -> chainconsumer/analysis.py line 9
# (from scipy.integrate import simps; used at line 299)
import chainconsumer
from chainconsumer.analysis import simps
print(simps([0.0, 1.0, 2.0], x=[0.0, 1.0, 2.0]))
print("OK")
