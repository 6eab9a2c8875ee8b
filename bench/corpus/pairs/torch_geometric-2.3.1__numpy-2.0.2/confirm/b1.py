# torch_geometric 2.3.1 DimeNet's spherical-basis helper: dimenet_utils.sph_harm_prefactor(2, 1)
# (lines 69-70),
# the factor DimeNet's SphericalBasisLayer builds its real spherical harmonics from
from torch_geometric.nn.models.dimenet_utils import sph_harm_prefactor

print(sph_harm_prefactor(2, 1))
print("OK")
