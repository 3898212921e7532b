#!/bin/sh
# make demo: not available until the sweep controller lands (issue "Sweeps").
echo "make demo: the sweep controller is not implemented yet;" >&2
echo "  'topoadvisor plan configs/quickstart.yaml' shows what the demo will run." >&2
exit 1
