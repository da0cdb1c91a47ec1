"""How to run the runnable part of the corpus on a CPU in well under a minute per program.

One `Recipe` per runnable program: the program's command-line arguments (step counts are reduced
with the program's own flags where it has them), the synthetic stand-ins it needs (see
`stand_ins/README.md`: data served through an import hook, files written into the working
directory), and, for programs whose step count no flag controls, `max_batches`: the MNIST stand-in
ends the program cleanly (exit status 0) when it is asked for more minibatches than that, the way
a finite data set would run out. The legacy run and the migrated run get the same recipe.

`python_path`: folders (relative to the repository's root) the program expects on `sys.path`
besides its own, as when run from the repository's root. `expected_s`: wall time of the legacy
run on a 2-core CPU, TensorFlow start included, as measured when the recipe was written.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Recipe:
    repo: str
    path: str
    args: tuple[str, ...] = ()
    stand_ins: tuple[str, ...] = ()  # names from stand_ins/registry.py
    max_batches: int | None = None
    python_path: tuple[str, ...] = ()
    expected_s: float = 30.0
    id: str = ""  # unique name of the run; defaults to repo:path

    def to_dict(self) -> dict:
        data = asdict(self)
        data["id"] = self.id or f"{self.repo}:{self.path}"
        data["args"], data["stand_ins"], data["python_path"] = list(self.args), list(self.stand_ins), list(self.python_path)
        del data["repo"], data["path"]
        return data


WISEODD = "wiseodd/generative-models"
WISEODD_SCRIPTS = (
    "GAN/ali_bigan/ali_bigan_tensorflow.py", "GAN/auxiliary_classifier_gan/ac_gan_tensorflow.py",
    "GAN/boundary_equilibrium_gan/began_tensorflow.py", "GAN/boundary_seeking_gan/bgan_tensorflow.py",
    "GAN/conditional_gan/cgan_tensorflow.py", "GAN/coupled_gan/cogan_tensorflow.py",
    "GAN/disco_gan/discogan_tensorflow.py", "GAN/dual_gan/dualgan_tensorflow.py",
    "GAN/ebgan/ebgan_tensorflow.py", "GAN/f_gan/f_gan_tensorflow.py",
    "GAN/improved_wasserstein_gan/wgan_gp_tensorflow.py", "GAN/infogan/infogan_tensorflow.py",
    "GAN/least_squares_gan/lsgan_tensorflow.py", "GAN/magan/magan_tensorflow.py",
    "GAN/mode_regularized_gan/mode_reg_gan_tensorflow.py", "GAN/softmax_gan/softmax_gan_tensorflow.py",
    "GAN/vanilla_gan/gan_tensorflow.py", "GAN/wasserstein_gan/wgan_tensorflow.py",
    "VAE/adversarial_autoencoder/aae_tensorflow.py", "VAE/adversarial_vb/avb_tensorflow.py",
    "VAE/conditional_vae/cvae_tensorflow.py", "VAE/denoising_vae/dvae_tensorflow.py",
    "VAE/vanilla_vae/vae_tensorflow.py",
)

OREILLY = "Hezi-Resheff/Oreilly-Learning-TensorFlow"
ZEHAOS = "Zehaos/MobileNet"
BRIGHTMART = "brightmart/text_classification"

RECIPES: tuple[Recipe, ...] = (
    # GAN / VAE zoo: `for it in range(1000000)` over mnist.train.next_batch; no flags.
    *(Recipe(WISEODD, path, stand_ins=("mnist",), max_batches=200) for path in WISEODD_SCRIPTS),
    # Book chapters.
    Recipe(OREILLY, "02__up_and_running/hello_world.py", expected_s=10),
    Recipe(OREILLY, "02__up_and_running/softmax.py", stand_ins=("mnist",), max_batches=300),
    Recipe(OREILLY, "04__convolutional_neural_networks/mnist_cnn.py", stand_ins=("mnist",), max_batches=100),
    Recipe(OREILLY, "05__text_and_visualizations/BasicRNNCell.py", stand_ins=("mnist",), max_batches=100),
    Recipe(OREILLY, "05__text_and_visualizations/vanilla_rnn_with_tfboard.py", stand_ins=("mnist",), max_batches=100),
    Recipe(OREILLY, "05__text_and_visualizations/LSTM_supervised_embeddings.py"),
    Recipe(OREILLY, "05__text_and_visualizations/scan_example.py", expected_s=10),
    Recipe(OREILLY, "06__word_embeddings_and_rnns/word2vec.py"),
    Recipe(OREILLY, "08__queues_threads/queue_basic.py", expected_s=15),
    # char-RNN on a small synthetic text, one epoch through its flags.
    Recipe("sherjilozair/char-rnn-tensorflow", "train.py", stand_ins=("tinyshakespeare",),
           args=("--data_dir", "data/tinyshakespeare", "--num_epochs", "1", "--save_every", "1000",
                 "--rnn_size", "64", "--batch_size", "16", "--seq_length", "25")),
    # Toy tasks on random data run at import (their `test()`), as the author left them.
    Recipe(BRIGHTMART, "a03_TextRNN/p8_TextRNN_model.py"),
    Recipe(BRIGHTMART, "a03_TextRNN/p8_TextRNN_model_multi_layers.py"),
    Recipe(BRIGHTMART, "a06_Seq2seqWithAttention/a1_seq2seq_attention_model.py"),
    # slim network unit tests (tf.test.main), run from the repository's root as their imports expect.
    *(Recipe(ZEHAOS, f"nets/{name}_test.py", python_path=(".",), expected_s=45)
      for name in ("alexnet", "overfeat", "vgg", "inception_v1", "resnet_v1", "resnet_v2", "mobilenet")),
)
