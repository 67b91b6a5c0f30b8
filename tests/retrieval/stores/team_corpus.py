"""What the toy team modules of the LangChain and LlamaIndex tests share: a few documents, each
long enough for a 1000-character splitter to cut it into overlapping chunks, and the packaged
MiniLM that embeds them (loaded once a session)."""

from __future__ import annotations

from functools import cache
from typing import Any

DOCUMENTS = {
    "volcanoes": (
        "Volcanoes form where molten rock reaches the surface of a planet. Most of them sit "
        "along the edges of tectonic plates, where one plate slides beneath another and the "
        "descending crust melts as it sinks into the hot mantle. The melt is lighter than the "
        "rock around it, so it rises through cracks and collects in magma chambers a few "
        "kilometres below the ground.\n\n"
        "When the pressure in a magma chamber exceeds the strength of the rock above it, the "
        "volcano erupts. Magma rich in silica is thick and traps gas, so its eruptions are "
        "explosive: ash columns climb tens of kilometres into the stratosphere and pyroclastic "
        "flows race down the slopes faster than a car. Magma poor in silica, like the basalt of "
        "Hawaii, is runny and lets its gas escape, so lava pours out in rivers and fountains "
        "instead of exploding.\n\n"
        "Volcanologists watch for signs of an eruption with seismometers, which record the "
        "small earthquakes of magma forcing its way upward, with satellites that measure how "
        "the ground swells, and with instruments that sample sulphur dioxide in the gas "
        "escaping from vents. None of these signs tells the exact day of an eruption, but "
        "together they have let authorities evacuate towns in time.\n\n"
        "Eruptions also change the climate. The sulphur a large eruption throws into the "
        "stratosphere forms droplets that reflect sunlight, and the year after Mount Pinatubo "
        "erupted in 1991 the average temperature of the planet fell by about half a degree. "
        "Over millions of years, though, volcanic carbon dioxide has kept the Earth warm enough "
        "for liquid water and for life."
    ),
    "bread": (
        "Bread begins with flour, water, salt and a leavening agent. When flour is mixed with "
        "water, two of its proteins, glutenin and gliadin, bond into gluten, a stretchy network "
        "that traps the gas the yeast produces. Kneading lines up the gluten strands, which is "
        "why a well kneaded dough can be stretched thin enough to let light through.\n\n"
        "Yeast is a single-celled fungus. It eats the sugars released from starch by the "
        "flour's enzymes and gives off carbon dioxide and alcohol. The gas inflates thousands "
        "of tiny bubbles in the dough, and the alcohol, along with other by-products of "
        "fermentation, gives bread much of its flavour. A slow, cool rise of a day or more "
        "develops a deeper taste than a quick warm one.\n\n"
        "Sourdough replaces commercial yeast with a starter, a culture of wild yeasts and "
        "lactic acid bacteria kept alive by regular feedings of flour and water. The bacteria "
        "make lactic and acetic acids, which give sourdough its tang and help it keep for "
        "longer without going stale or growing mould.\n\n"
        "In the oven, the gas in the bubbles expands and the water in the dough turns to steam, "
        "so the loaf springs up during its first minutes. Then the starch sets, the proteins "
        "firm, and the surface browns as sugars and amino acids react in the Maillard "
        "reaction, the same chemistry that browns a steak. Bakers bake with steam at first so "
        "that the crust stays soft long enough for the loaf to rise fully."
    ),
    "tides": (
        "Tides are the regular rise and fall of the sea. They are caused mainly by the gravity "
        "of the Moon, which pulls hardest on the side of the Earth facing it and weakest on "
        "the far side. The difference stretches the oceans into two bulges, one under the Moon "
        "and one opposite it, and as the Earth turns, most coasts pass through both bulges "
        "each day, giving two high tides and two low tides roughly every twenty-four hours and "
        "fifty minutes.\n\n"
        "The Sun raises tides as well, a little less than half as strong as the Moon's. When "
        "the Sun, Moon and Earth line up at new and full moon, their pulls add together and "
        "produce spring tides, with the highest highs and lowest lows. At the quarter moons "
        "the pulls partly cancel and the range is smallest: these are neap tides.\n\n"
        "The shape of the coast changes the tide enormously. In the open ocean the range is "
        "often under a metre, but a funnel-shaped bay can amplify it: in the Bay of Fundy in "
        "Canada the water rises and falls by up to sixteen metres, because the natural period "
        "of the water sloshing in the bay is close to the period of the tide itself.\n\n"
        "Tidal currents carry a great deal of energy, and a few power stations harvest it with "
        "turbines placed in narrow channels or with barrages across estuaries. Friction from "
        "the tides is also slowly braking the Earth's spin, lengthening the day by about two "
        "milliseconds each century while the Moon drifts away by almost four centimetres a year."
    ),
}

MINILM = "sentence-transformers/all-MiniLM-L6-v2"


@cache
def minilm() -> Any:
    """The packaged all-MiniLM-L6-v2 (no model hub)."""
    from sentence_transformers import SentenceTransformer

    from goldenset.core.packaged_models import resolve_model_path

    return SentenceTransformer(resolve_model_path(MINILM), device="cpu")


def embed(texts: list[str]) -> list[list[float]]:
    """Unit-length MiniLM vectors: a dot product is their cosine."""
    return minilm().encode(texts, normalize_embeddings=True).tolist()
