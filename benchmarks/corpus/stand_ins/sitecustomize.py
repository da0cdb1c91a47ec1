"""Sets up the corpus stand-in layer at interpreter start, as the environment asks (else nothing).

TFM_CORPUS_STAND_INS: stand-ins to activate (comma-separated names of corpus_stand_ins.REGISTRY);
TFM_CORPUS_SCRIPT_PATH: folders, relative to the running script's, to import top-level modules from;
TFM_CORPUS_MAX_BATCHES: read by the MNIST stand-in (see corpus_stand_ins/mnist.py);
TFM_CORPUS_MAX_RUNS: steps (Session.run / top-level tf.function calls) before a clean exit (run_budget.py).
Put this folder on PYTHONPATH (benchmarks/corpus.py does) to run a corpus program with synthetic data.
"""
import os

from corpus_stand_ins import activate, hook, names_from_environment, run_budget, script_path_from_environment

if names_from_environment():
    activate(names_from_environment(), os.getcwd())
if script_path_from_environment():
    hook.install_script_relative(script_path_from_environment())
if os.environ.get(run_budget.MAX_RUNS_VARIABLE):
    run_budget.install(int(os.environ[run_budget.MAX_RUNS_VARIABLE]))
