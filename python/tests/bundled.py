"""The bundled traces the Python tests read (examples/*.db, which
APPTRACER_EXAMPLES names)."""
import os

EXAMPLES = os.environ["APPTRACER_EXAMPLES"]
VECTOR_ADD = os.path.join(EXAMPLES, "vector_add.db")
UM = os.path.join(EXAMPLES, "um_bandwidth_h100.db")
PYTORCH = os.path.join(EXAMPLES, "pytorch_train.db")
