"""How to run the runnable part of the corpus on a CPU in well under a minute per program.

One `Recipe` per runnable program: the program's command-line arguments (step counts are reduced
with the program's own flags where it has them), the synthetic stand-ins it needs (see
`stand_ins/README.md`: data served through an import hook, files written into the working
directory), and, for programs whose step count no flag controls, `max_batches` (the MNIST stand-in
ends the program cleanly, exit status 0, when asked for more minibatches than that, the way a finite
data set runs out) or else `max_runs` (the run budget ends it cleanly before Session.run / top-level
tf.function call N+1; stand_ins/corpus_stand_ins/run_budget.py). The legacy run and the migrated run
get the same recipe. A file may have several recipes (one entry script, several models).

`python_path`: folders (relative to the repository's root) the program expects on `sys.path`
besides its own, as when run from the repository's root. `expected_s`: wall time of the legacy
run on the legacy runtime, TensorFlow start included, rounded up to 5 s, as measured in the baseline
(benchmarks/results/corpus-cpu-2026-11-25.md) on a shared 2-core CPU (load average about 7).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Recipe:
    repo: str
    path: str
    args: tuple[str, ...] = ()
    stand_ins: tuple[str, ...] = ()  # names from stand_ins/registry.py
    max_batches: int | None = None
    max_runs: int | None = None
    python_path: tuple[str, ...] = ()
    expected_s: float = 30.0
    id: str = ""  # unique name of the run; defaults to repo:path

    def to_dict(self) -> dict:
        data = asdict(self)
        data["id"] = self.id or " ".join([f"{self.repo}:{self.path}", *self.args])
        data["args"], data["stand_ins"], data["python_path"] = list(self.args), list(self.stand_ins), list(self.python_path)
        del data["repo"], data["path"]
        return data


WISEODD = "wiseodd/generative-models"
# Not runnable here: adversarial_vb, conditional_vae and denoising_vae import torch (unused), which is
# not installed.
WISEODD_SCRIPTS = (
    "GAN/ali_bigan/ali_bigan_tensorflow.py", "GAN/auxiliary_classifier_gan/ac_gan_tensorflow.py",
    "GAN/boundary_equilibrium_gan/began_tensorflow.py", "GAN/boundary_seeking_gan/bgan_tensorflow.py",
    "GAN/conditional_gan/cgan_tensorflow.py", "GAN/ebgan/ebgan_tensorflow.py", "GAN/f_gan/f_gan_tensorflow.py",
    "GAN/improved_wasserstein_gan/wgan_gp_tensorflow.py", "GAN/infogan/infogan_tensorflow.py",
    "GAN/least_squares_gan/lsgan_tensorflow.py", "GAN/magan/magan_tensorflow.py",
    "GAN/mode_regularized_gan/mode_reg_gan_tensorflow.py", "GAN/softmax_gan/softmax_gan_tensorflow.py",
    "GAN/vanilla_gan/gan_tensorflow.py", "GAN/wasserstein_gan/wgan_tensorflow.py",
    "VAE/adversarial_autoencoder/aae_tensorflow.py", "VAE/vanilla_vae/vae_tensorflow.py",
)

# These draw minibatches with np.random.choice from mnist.train.images: only the run budget bounds them.
WISEODD_SAMPLING_SCRIPTS = ("GAN/coupled_gan/cogan_tensorflow.py", "GAN/disco_gan/discogan_tensorflow.py",
                            "GAN/dual_gan/dualgan_tensorflow.py")

HWALSUKLEE = "hwalsuklee/tensorflow-generative-model-collections"
HWALSUKLEE_MODELS = ("GAN", "CGAN", "infoGAN", "ACGAN", "EBGAN", "BEGAN", "WGAN", "WGAN_GP", "DRAGAN", "LSGAN",
                     "VAE", "CVAE")

OREILLY = "Hezi-Resheff/Oreilly-Learning-TensorFlow"
ZEHAOS = "Zehaos/MobileNet"
BRIGHTMART = "brightmart/text_classification"

RECIPES: tuple[Recipe, ...] = (
    # GAN / VAE zoo: `for it in range(1000000)` over mnist.train.next_batch; no flags.
    *(Recipe(WISEODD, path, stand_ins=("mnist",), max_batches=200, expected_s=15) for path in WISEODD_SCRIPTS),
    *(Recipe(WISEODD, path, stand_ins=("mnist",), max_runs=150, expected_s=15) for path in WISEODD_SAMPLING_SCRIPTS),
    # One entry script, twelve model classes: an epoch is 1,093 steps, so the run budget stops it (the
    # models run one D and one or more G steps per iteration).
    *(Recipe(HWALSUKLEE, "main.py", args=("--gan_type", model, "--epoch", "1"), stand_ins=("mnist_idx",),
             max_runs=60, expected_s=45) for model in HWALSUKLEE_MODELS),
    # Book chapters.
    Recipe(OREILLY, "02__up_and_running/hello_world.py", expected_s=10),
    Recipe(OREILLY, "02__up_and_running/softmax.py", stand_ins=("mnist",), max_batches=300, expected_s=10),
    Recipe(OREILLY, "04__convolutional_neural_networks/mnist_cnn.py", stand_ins=("mnist",), max_batches=100,
           expected_s=20),
    Recipe(OREILLY, "05__text_and_visualizations/BasicRNNCell.py", stand_ins=("mnist",), max_batches=100,
           expected_s=10),
    Recipe(OREILLY, "05__text_and_visualizations/vanilla_rnn_with_tfboard.py", stand_ins=("mnist",), max_batches=100,
           expected_s=15),
    Recipe(OREILLY, "05__text_and_visualizations/LSTM_supervised_embeddings.py", expected_s=20),
    Recipe(OREILLY, "05__text_and_visualizations/scan_example.py", expected_s=10),
    # Not here: word2vec (tf.contrib.tensorboard, which the legacy runtime cannot serve) and queue_basic
    # (does not end); char-rnn's train.py needs tf.contrib.legacy_seq2seq, likewise.
    Recipe(OREILLY, "06__word_embeddings_and_rnns/GRU_pretrained_GloVe.py", stand_ins=("glove",), expected_s=20),
    # Toy tasks on random data run at import (their `test()`), as the author left them.
    Recipe(BRIGHTMART, "a03_TextRNN/p8_TextRNN_model.py", expected_s=15),
    Recipe(BRIGHTMART, "a03_TextRNN/p8_TextRNN_model_multi_layers.py", expected_s=15),
    Recipe(BRIGHTMART, "a06_Seq2seqWithAttention/a1_seq2seq_attention_model.py", expected_s=35),
    # slim network unit tests (tf.test.main), run from the repository's root as their imports expect.
    # Not here: resnet_v1/v2 (a test fails on the legacy runtime), inception_v4 (errors there),
    # inception_resnet_v2 (over a minute). inception_v3 takes about 50 s alone, 70 s on a loaded machine.
    *(Recipe(ZEHAOS, f"nets/{name}_test.py", python_path=(".",), expected_s=seconds)
      for name, seconds in (("alexnet", 15), ("overfeat", 20), ("vgg", 30), ("inception_v1", 40), ("inception_v2", 50),
                            ("inception_v3", 70), ("mobilenet", 15))),
)
