#!/usr/bin/env python
"""Write the demo collection shipped in lsr_lucene/data/demo from the hand-written texts below.

Every document carries tags stating facts about it ("tea" = about a tea, "caffeine" = the drink
contains caffeine, a trailing * = the tag is the document's central topic). Compositional queries
are judged from the tags (relevant = all ``must`` tags and no ``must_not`` tag, grade 2 when every
``must`` topic tag is central, else 1), so the qrels follow the texts; documents that match only one side
of a composition are written to the qrels with grade 0. Ordinary queries list their relevant documents.

    python scripts/make_demo_data.py [--out lsr_lucene/data/demo] [--check]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# (id, title, text, tags)
DOCS = [
    # ---- tea, coffee, caffeine
    ("tea-01", "Green tea", "Green tea is made from leaves of Camellia sinensis that are steamed or pan-fired soon after picking. A cup contains roughly a third of the caffeine found in brewed coffee.", "tea* caffeine"),
    ("tea-02", "Black tea", "Black tea leaves are fully oxidised before drying, which gives the brew its dark colour and brisk taste. It carries more caffeine than green or white tea.", "tea* caffeine"),
    ("tea-03", "Chamomile", "Chamomile tea is an infusion of dried daisy-like flowers. It contains no caffeine and is often sipped in the evening to help people relax before sleep.", "tea* herbal"),
    ("tea-04", "Rooibos", "Rooibos, or red bush tea, comes from a shrub grown in South Africa's Cederberg mountains. It is naturally free of caffeine and has a sweet, slightly nutty flavour.", "tea* herbal"),
    ("tea-05", "Peppermint tea", "Steeping fresh or dried peppermint leaves in hot water makes a refreshing caffeine-free tea that many people drink after meals to settle the stomach.", "tea* herbal"),
    ("tea-06", "Decaffeinated tea", "Decaffeinated black tea is treated with carbon dioxide or water to strip out the stimulant, leaving a brew with the familiar taste but without the caffeine kick.", "tea decaf"),
    ("tea-07", "Matcha", "Matcha is a bright green powder of stone-ground tea leaves whisked into hot water. Because the whole leaf is consumed, it delivers a strong dose of caffeine.", "tea* caffeine"),
    ("tea-08", "Yerba mate", "Yerba mate is a South American drink brewed from the leaves of a holly in a hollow gourd and sipped through a metal straw. A cup holds nearly as much caffeine as coffee.", "tea caffeine"),
    ("tea-09", "Hibiscus tea", "Hibiscus tea is a tart, ruby-red infusion of dried flower calyces, served hot or iced. It has no caffeine and a flavour reminiscent of cranberries.", "tea* herbal"),
    ("coffee-01", "Espresso", "Espresso is brewed by forcing hot water through finely ground coffee at high pressure, producing a small, concentrated shot topped with golden crema.", "coffee* espresso* caffeine"),
    ("coffee-02", "Cold brew", "Cold brew coffee is made by soaking coarse grounds in cold water for twelve to twenty-four hours. The result is smooth and less acidic, and it can be diluted with milk or water.", "coffee* caffeine"),
    ("coffee-03", "French press", "A French press steeps ground coffee in hot water for about four minutes before a metal mesh plunger pushes the grounds to the bottom, giving a full-bodied cup.", "coffee* caffeine"),
    ("coffee-04", "Cappuccino", "A cappuccino combines a shot of espresso with steamed milk and a thick layer of milk foam, and in Italy it is drunk almost only in the morning.", "coffee* espresso caffeine"),
    ("coffee-05", "The origins of coffee", "Legend credits an Ethiopian goatherd with discovering coffee after his goats grew lively from eating red berries. By the fifteenth century coffee was being roasted and brewed in Yemen.", "coffee*"),
    ("coffee-06", "Pour-over coffee", "Pour-over coffee is made by slowly pouring hot water in circles over grounds held in a paper filter, which lets the brewer control how the flavour is extracted.", "coffee* caffeine"),
    ("coffee-07", "Home espresso machines", "Home espresso machines use a pump to reach about nine bars of pressure. A clean group head and a fine, even grind are the keys to a good shot.", "coffee espresso*"),
    ("coffee-08", "Decaf coffee", "Decaffeinated coffee beans are soaked before roasting to remove most of their caffeine. The Swiss Water Process does this with water alone, without chemical solvents.", "coffee* decaf"),
    ("caff-01", "Caffeine and sleep", "Caffeine blocks adenosine receptors in the brain, which is why a cup of coffee in the afternoon can delay sleep by an hour or more.", "caffeine* sleep"),
    ("caff-02", "Energy drinks", "A large can of energy drink can contain as much caffeine as two cups of coffee, along with a lot of sugar.", "caffeine* sugar"),
    ("caff-03", "Caffeine in chocolate", "Dark chocolate contains small amounts of caffeine and a related stimulant, theobromine, which is also why chocolate is poisonous to dogs.", "caffeine chocolate dog"),
    # ---- pets
    ("pet-01", "Crate training a puppy", "Crate training gives a puppy a quiet den of its own. Short sessions, a soft blanket and a tasty treat tossed inside help the dog learn to go in willingly.", "dog* training* treats"),
    ("pet-02", "Clicker training", "Clicker training marks the exact moment a dog does something right with a sharp click, followed at once by a small food reward.", "dog* training* treats"),
    ("pet-03", "Training dogs with play", "Some trainers reward dogs with a game of tug or a thrown ball instead of food, which works well for energetic breeds that care more about toys than snacks.", "dog* training*"),
    ("pet-04", "Praise as a reward", "Calm verbal praise and gentle petting can reinforce good manners in dogs that are not motivated by food, without adding calories to their diet.", "dog* training*"),
    ("pet-05", "Loose-leash walking", "To teach a dog to walk on a loose leash, stop whenever the lead goes tight and move on only when it slackens; going forward becomes the reward.", "dog* training*"),
    ("pet-06", "Why cats scratch", "Cats scratch to keep their claws in shape and to mark territory. A sturdy sisal post placed next to the sofa usually saves the furniture.", "cat*"),
    ("pet-07", "Litter boxes", "A good rule is one litter box per cat plus one extra, placed in quiet spots away from the food bowls.", "cat*"),
    ("pet-08", "Introducing a cat to a dog", "When a new cat joins a home with a dog, keep the two in separate rooms at first and swap their bedding so each animal learns the other's scent before they meet.", "cat* dog*"),
    ("pet-09", "Cats and dogs under one roof", "Many cats and dogs share a home peacefully, especially when raised together from a young age; the cat just needs high shelves where the dog cannot follow.", "cat* dog*"),
    ("pet-10", "Feeding cats and dogs in one household", "Dogs will gladly eat cat food, but it is too rich in protein and fat for them, so in homes with both pets the cat is best fed on a counter out of the dog's reach.", "cat* dog*"),
    ("pet-11", "Dogs for apartments", "Small, calm breeds such as the French bulldog or the cavalier King Charles spaniel adapt well to apartment life, provided they get daily walks.", "dog*"),
    ("pet-12", "Why cats purr", "Cats purr by rapidly twitching the muscles of the larynx. They purr when content but also when hurt, which may help them heal.", "cat*"),
    ("pet-13", "Kitten vaccinations", "Kittens get their first vaccinations at about eight weeks, protecting them against feline panleukopenia, calicivirus and herpesvirus.", "cat*"),
    ("pet-14", "Reading a dog's tail", "A wagging tail is not always friendly: a stiff, high wag can signal tension, while a loose, sweeping wag shows a relaxed dog.", "dog*"),
    ("pet-15", "Training a cat", "Cats can be trained too: a lick of tuna paste as a reward teaches many cats to sit, come when called or jump through a hoop.", "cat* training* treats"),
    # ---- baking and desserts
    ("bake-01", "Flourless chocolate cake", "This dense chocolate cake is made only from dark chocolate, butter, sugar and eggs. With no flour at all, it is naturally gluten-free.", "cake* chocolate* sugar"),
    ("bake-02", "Sachertorte", "A Viennese Sachertorte layers a chocolate sponge, made with flour and whipped eggs, with apricot jam under a glossy chocolate glaze.", "cake* chocolate* flour sugar"),
    ("bake-03", "Chocolate lava cakes", "Molten lava cakes are baked briefly so the centre stays runny; the batter needs only a spoonful of flour to hold the edges together.", "cake* chocolate* flour"),
    ("bake-04", "Tarta de Santiago", "Tarta de Santiago, an almond cake from Galicia, is made from ground almonds, eggs and sugar with no wheat flour, and is dusted with icing sugar around a cross-shaped stencil.", "cake* sugar"),
    ("bake-05", "Chocolate mousse", "Chocolate mousse is made by folding whipped egg whites into melted chocolate; it is chilled rather than baked.", "chocolate* dessert"),
    ("bake-06", "Pavlova", "Pavlova is a meringue with a crisp shell and a soft marshmallow-like centre, topped with whipped cream and fresh fruit.", "dessert sugar"),
    ("bake-07", "Flourless chocolate cookies", "These chewy cookies are made from cocoa powder, egg whites and icing sugar, with no flour.", "chocolate* cookies sugar"),
    ("bake-08", "Chocolate sponge", "A light chocolate sponge cake is made by whisking eggs and sugar until pale, then folding in sifted flour and cocoa.", "cake* chocolate* flour sugar"),
    ("bake-09", "Apple crumble", "Apple crumble tops sliced, cinnamon-spiced apples with a rubble of flour, butter and sugar, baked until golden.", "apple* dessert* flour sugar"),
    ("bake-10", "Baked apples with no added sugar", "For a dessert with no added sugar, core whole apples, stuff them with raisins and cinnamon and bake them until soft; the fruit's own sweetness is enough.", "apple* dessert*"),
    ("bake-11", "Apple pie", "A traditional apple pie fills a buttery crust with apples tossed in sugar, cinnamon and a little lemon juice.", "apple* dessert* flour sugar"),
    ("bake-12", "Date-sweetened apple cake", "This apple cake gets all its sweetness from mashed dates and grated apple instead of sugar, which makes it a favourite of people avoiding refined sugar.", "apple* dessert* cake flour"),
    ("bake-13", "Sourdough starter", "A sourdough starter is a mix of flour and water colonised by wild yeasts and lactic acid bacteria; it has to be fed regularly to stay active.", "bread flour"),
    ("bake-14", "Keeping bread fresh", "Bread goes stale faster in the refrigerator than at room temperature; for longer storage, slice it and freeze it.", "bread"),
    ("bake-15", "Apple varieties", "Granny Smith apples are tart and hold their shape when baked, while Fuji and Gala apples are sweeter and better eaten fresh.", "apple*"),
    ("bake-16", "Torta caprese", "In the torta caprese, a rich chocolate cake from the island of Capri, ground almonds take the place of flour entirely.", "cake* chocolate* sugar"),
    # ---- space
    ("space-01", "Mercury", "Mercury, the smallest planet, has no moons at all. Its days are scorching and its nights fall to about minus 180 degrees Celsius.", "planet* nomoons"),
    ("space-02", "Venus", "Venus is wrapped in thick clouds of sulphuric acid and, like Mercury, has no natural satellite of its own.", "planet* nomoons"),
    ("space-03", "How the Moon formed", "The Moon probably formed when a body the size of Mars struck the young Earth; it is still drifting away from us by about four centimetres a year.", "planet moon* hasmoons"),
    ("space-04", "Phobos and Deimos", "Mars has two small, lumpy moons, Phobos and Deimos, which may be captured asteroids. Phobos orbits so close that it will eventually break apart.", "planet mars* moon* hasmoons"),
    ("space-05", "Water on ancient Mars", "Dried river valleys and lake beds show that liquid water once flowed on Mars, and radar has found thick ice buried beneath its polar caps.", "planet mars* water* hasmoons"),
    ("space-06", "Perseverance", "NASA's Perseverance rover landed in Jezero Crater on Mars in 2021 to collect rock samples, carrying a small helicopter called Ingenuity.", "planet mars* hasmoons"),
    ("space-07", "Olympus Mons", "Olympus Mons on Mars is the tallest volcano in the solar system, about two and a half times the height of Mount Everest.", "planet mars* volcano* hasmoons"),
    ("space-08", "Europa", "Jupiter's moon Europa hides a salty ocean of liquid water beneath its icy crust, which makes it a prime target in the search for life.", "jupiter moon* water*"),
    ("space-09", "Enceladus", "Saturn's moon Enceladus sprays plumes of water vapour and ice grains from cracks near its south pole.", "moon* water*"),
    ("space-10", "The Great Red Spot", "The Great Red Spot is a giant storm on Jupiter, wider than the Earth, that astronomers have watched for well over a century.", "planet jupiter* hasmoons"),
    ("space-11", "The Galilean moons", "Galileo discovered Jupiter's four largest moons, Io, Europa, Ganymede and Callisto, in 1610; Ganymede is even larger than the planet Mercury.", "planet jupiter* moon* hasmoons"),
    ("space-12", "Saturn's rings", "Saturn's rings are made of countless chunks of ice and rock, some as small as grains of sand and others as big as houses.", "planet* hasmoons"),
    ("space-13", "Dust storms on Mars", "Dust storms on Mars can grow until they cover the whole planet for weeks, blotting out the sunlight that solar-powered landers depend on.", "planet mars* storm* hasmoons"),
    ("space-14", "Ice on the Moon", "Ice has been detected in permanently shadowed craters near the Moon's south pole, and future astronauts might turn it into drinking water and rocket fuel.", "moon* water*"),
    ("space-15", "Exoplanets", "More than five thousand planets have been found orbiting other stars, many of them spotted by the tiny dip in starlight as they pass in front of it.", "exoplanet*"),
    ("space-16", "Ice dug up on Mars", "In 2008 the Phoenix lander scraped the Martian soil and exposed bright chunks of water ice that slowly vanished into the thin air.", "planet mars* water* hasmoons"),
    ("space-17", "Io", "Jupiter's moon Io is the most volcanically active world in the solar system, with hundreds of volcanoes kept alive by tidal heating.", "jupiter moon* volcano*"),
    # ---- volcanoes and Iceland
    ("volc-01", "Eyjafjallajökull", "The 2010 eruption of Eyjafjallajökull in Iceland threw ash high into the atmosphere and grounded flights across Europe for days.", "volcano* iceland* aviation"),
    ("volc-02", "Fissure eruptions in Iceland", "Many Icelandic eruptions open long fissures rather than a single crater, as at Fagradalsfjall near Reykjavik, where lava fountains drew crowds of hikers from 2021.", "volcano* iceland*"),
    ("volc-03", "Hekla", "Hekla, one of Iceland's most active volcanoes, was known in medieval Europe as the gateway to hell.", "volcano* iceland*"),
    ("volc-04", "Kilauea", "Kilauea on Hawaii's Big Island erupted almost without pause from 1983 to 2018, adding new land wherever its lava reached the sea.", "volcano* hawaii*"),
    ("volc-05", "Mauna Loa", "Mauna Loa in Hawaii is the largest active volcano on Earth by volume; its gentle slopes are typical of shield volcanoes built from runny basalt lava.", "volcano* hawaii*"),
    ("volc-06", "Vesuvius", "In 79 AD Mount Vesuvius buried the Roman towns of Pompeii and Herculaneum under ash and pumice, preserving them for centuries.", "volcano* rome"),
    ("volc-07", "Mount Fuji", "Mount Fuji, Japan's highest peak, is a dormant volcano that last erupted in 1707; climbers reach the summit mainly in July and August.", "volcano* japan"),
    ("volc-08", "Krakatoa", "The 1883 eruption of Krakatoa in Indonesia was heard thousands of kilometres away and cooled global temperatures for more than a year.", "volcano*"),
    ("volc-09", "Mount St. Helens", "When Mount St. Helens erupted in 1980, its north flank collapsed in the largest landslide ever recorded.", "volcano*"),
    ("volc-10", "Strokkur geyser", "Iceland's Strokkur geyser erupts every few minutes, shooting boiling water up to twenty metres high; the word geyser comes from nearby Geysir.", "iceland* geyser"),
    ("volc-11", "The Icelandic horse", "The Icelandic horse is small but sturdy and has a smooth extra gait called the tölt; a horse that leaves Iceland may never return.", "iceland* horse"),
    ("volc-12", "Puffins", "Around half of the world's Atlantic puffins nest on Iceland's sea cliffs, flying back each spring to the same burrows.", "iceland* bird* flying"),
    ("volc-13", "Geothermal heating in Iceland", "Almost nine in ten Icelandic homes are heated with hot water piped from deep underground.", "iceland* geothermal renewable"),
    ("volc-14", "Volcanic ash and aircraft", "Volcanic ash is made of tiny glassy shards that can melt inside jet engines, so air traffic controllers route planes around ash clouds.", "volcano* aviation"),
    ("volc-15", "Reykjavik", "Reykjavik is the northernmost capital of a sovereign state, and its metropolitan area is home to about two thirds of Iceland's population.", "iceland*"),
    # ---- birds, mammals, eggs
    ("bird-01", "Penguins", "Penguins cannot fly, but their stiff, flipper-like wings make them superb swimmers; emperor penguins dive deeper than 500 metres.", "bird* flightless"),
    ("bird-02", "Ostrich", "The ostrich is the largest living bird. Far too heavy to fly, it can sprint at about 70 kilometres per hour.", "bird* flightless"),
    ("bird-03", "Kiwi", "New Zealand's kiwi is a flightless, nocturnal bird with nostrils at the tip of its long beak, which it uses to sniff out worms.", "bird* flightless"),
    ("bird-04", "Emu", "Emus roam the Australian outback in loose flocks; they cannot fly but may walk hundreds of kilometres in search of water.", "bird* flightless"),
    ("bird-05", "Dodo", "The dodo, a flightless relative of pigeons from Mauritius, was gone less than a century after sailors first landed there in 1598.", "bird* flightless"),
    ("bird-06", "Arctic tern", "The Arctic tern flies from the Arctic to Antarctica and back every year, the longest migration of any animal.", "bird* flying migration"),
    ("bird-07", "Hummingbirds", "Hummingbirds beat their wings up to eighty times a second and are the only birds that can fly backwards.", "bird* flying"),
    ("bird-08", "Albatross", "A wandering albatross can glide for hours without flapping, riding the wind over the waves on wings more than three metres across.", "bird* flying"),
    ("bird-09", "Bats", "Bats are the only mammals capable of true flight; their wings are skin stretched between long finger bones.", "mammal* flying"),
    ("bird-10", "Flying fish", "Flying fish escape predators by leaping from the water and gliding on wing-like fins for up to 200 metres.", "fish flying"),
    ("bird-11", "Platypus", "The platypus is one of the few mammals that lay eggs. It hunts underwater with its eyes shut, sensing prey through electroreceptors in its bill.", "mammal* eggs*"),
    ("bird-12", "Echidna", "Echidnas are spiny, egg-laying mammals; the female lays a single leathery egg straight into a pouch on her belly.", "mammal* eggs*"),
    ("bird-13", "Sea turtle nests", "Female sea turtles haul themselves onto the beach at night to lay about a hundred eggs in a pit dug in the sand.", "reptile eggs*"),
    ("bird-14", "Hens and eggs", "A hen lays roughly one egg a day, and the shell colour, from white to deep brown, depends on her breed rather than her diet.", "bird eggs*"),
    ("bird-15", "Elephant calves", "Elephants have the longest pregnancy of any land mammal, nearly twenty-two months, and a newborn calf weighs around a hundred kilograms.", "mammal*"),
    # ---- plants and gardening
    ("plant-01", "Spider plant", "The spider plant is an easy houseplant that tolerates low light and is considered non-toxic to cats and dogs, though cats love to chew its leaves.", "houseplant* petsafe"),
    ("plant-02", "Boston fern", "Boston ferns like humidity and indirect light, and animal poison lists count them as safe for cats.", "houseplant* petsafe"),
    ("plant-03", "Lilies and cats", "Every part of a true lily is highly toxic to cats; even pollen licked from fur can cause kidney failure.", "cat toxic"),
    ("plant-04", "Pothos", "Golden pothos trails happily from shelves in dim rooms, but its sap contains calcium oxalate crystals that burn a cat's mouth.", "houseplant* toxic"),
    ("plant-05", "Peace lily", "The peace lily droops dramatically when thirsty and recovers within hours of watering; it is toxic to cats and dogs if chewed.", "houseplant* toxic"),
    ("plant-06", "Calathea", "Calatheas, known as prayer plants, fold their patterned leaves upward at night and are not toxic to cats.", "houseplant* petsafe"),
    ("plant-07", "Snake plant", "The snake plant survives weeks of neglect and low light, but its leaves are mildly toxic to pets and cause nausea if eaten.", "houseplant* toxic"),
    ("plant-08", "Growing tomatoes", "Tomatoes need six to eight hours of direct sun a day; in shade they grow leggy and set little fruit.", "vegetable* sun tomato"),
    ("plant-09", "Lettuce in the shade", "Lettuce and spinach are among the few vegetables that grow well in partial shade, which also stops them bolting in summer heat.", "vegetable* shade*"),
    ("plant-10", "Hostas", "Hostas are shade-loving perennials grown for their broad, often striped leaves; slugs are their main enemy.", "shade*"),
    ("plant-11", "Kale for a shady bed", "Kale tolerates partial shade and even tastes sweeter after a light frost, which makes it a good crop for a north-facing bed.", "vegetable* shade*"),
    ("plant-12", "Watering houseplants", "Most houseplants die from overwatering rather than drought; check that the top few centimetres of soil are dry before watering again.", "houseplant*"),
    ("plant-13", "Autumn colours", "Leaves turn red and yellow in autumn because trees stop making green chlorophyll, unmasking yellow carotenoids and producing new red anthocyanins.", "tree*"),
    ("plant-14", "Composting", "A healthy compost heap mixes green material such as grass clippings with brown material such as dry leaves, and is turned now and then to let air in.", "garden"),
    ("plant-15", "Ferns in the woods", "Ferns thrive in the damp shade beneath trees, where their spores settle on moist soil.", "shade*"),
    ("plant-16", "Cat grass", "Cat grass is usually wheat or oat seedlings grown in a pot indoors; cats nibble it happily and it is perfectly safe for them.", "houseplant petsafe cat"),
    # ---- cooking
    ("cook-01", "Pesto", "Genoese pesto is pounded from basil, pine nuts, garlic, Parmesan and olive oil, and is traditionally tossed with trofie pasta.", "pasta* sauce*"),
    ("cook-02", "Carbonara", "Authentic carbonara coats spaghetti with egg yolks, pecorino, black pepper and crisp guanciale; cream and tomatoes have no place in it.", "pasta* sauce*"),
    ("cook-03", "Marinara", "Marinara is a quick tomato sauce simmered with garlic, olive oil and oregano, served over spaghetti or used for dipping.", "pasta* sauce* tomato*"),
    ("cook-04", "Ragù alla bolognese", "Ragù alla bolognese is a slow-cooked meat sauce with a little tomato, wine and milk, classically served with tagliatelle rather than spaghetti.", "pasta* sauce* tomato"),
    ("cook-05", "Aglio e olio", "Spaghetti aglio e olio needs only garlic gently fried in olive oil, chilli flakes and parsley, which makes it a classic late-night dish.", "pasta* sauce*"),
    ("cook-06", "Fettuccine Alfredo", "Fettuccine Alfredo was originally pasta tossed with butter and Parmesan until creamy; the version made with heavy cream is an American adaptation.", "pasta* sauce*"),
    ("cook-07", "Amatriciana", "Amatriciana sauce combines guanciale, pecorino and tomatoes and is named after the town of Amatrice in central Italy.", "pasta* sauce* tomato*"),
    ("cook-08", "Gazpacho", "Gazpacho is a chilled soup from Andalusia made of blended raw tomatoes, cucumber, peppers, garlic and olive oil.", "tomato* soup"),
    ("cook-09", "Pico de gallo", "Pico de gallo, the fresh Mexican salsa, is chopped tomato, onion, coriander, chilli and lime juice.", "tomato* sauce"),
    ("cook-10", "Rice and beans", "Rice and beans together make a complete protein and appear all over Latin America, from Cuban moros y cristianos to Costa Rican gallo pinto.", "rice* beans*"),
    ("cook-11", "Red beans and rice", "Louisiana red beans and rice was traditionally cooked on Mondays, the beans simmering for hours with a ham bone while the laundry was done.", "rice* beans*"),
    ("cook-12", "Risotto", "Risotto is made by adding hot stock to short-grain rice a ladle at a time, stirring until the grains release their starch.", "rice*"),
    ("cook-13", "Baked beans", "Baked beans are haricot beans stewed in a sweet tomato sauce; in Britain they are a fixture of the cooked breakfast.", "beans* tomato"),
    ("cook-14", "Fluffy rice", "For fluffy long-grain rice, rinse it until the water runs clear, simmer it with the lid on and let it rest for ten minutes.", "rice*"),
    ("cook-15", "Chili con carne", "Chili con carne is a spicy stew of minced beef, chillies and usually kidney beans, often served with cornbread.", "beans*"),
    ("cook-16", "Fried rice", "Fried rice is best made with day-old rice, which is drier and keeps the grains separate in a hot wok.", "rice*"),
    # ---- history
    ("hist-01", "The Great Pyramid", "The Great Pyramid of Giza was built for the pharaoh Khufu around 2560 BC and remained the tallest human-made structure for almost four thousand years.", "pyramid* egypt*"),
    ("hist-02", "Step Pyramid of Djoser", "Egypt's first pyramid, the Step Pyramid of Djoser at Saqqara, was designed by the architect Imhotep as six stacked platforms.", "pyramid* egypt*"),
    ("hist-03", "Teotihuacan", "The Pyramid of the Sun at Teotihuacan, near modern Mexico City, is one of the largest pyramids in the Americas.", "pyramid* mexico"),
    ("hist-04", "Chichen Itza", "At the Maya city of Chichen Itza, the pyramid of El Castillo casts a serpent-shaped shadow down its staircase at the equinoxes.", "pyramid* mexico"),
    ("hist-05", "Pyramids of Meroë", "Sudan has more pyramids than Egypt: the kings of Kush built steep, narrow pyramids by the hundred, many of them at Meroë.", "pyramid* sudan"),
    ("hist-06", "Hieroglyphs", "Egyptian hieroglyphs were deciphered in the 1820s by Jean-François Champollion with the help of the Rosetta Stone, which repeats one decree in three scripts.", "egypt* writing"),
    ("hist-07", "The Nile flood", "Farming in ancient Egypt depended on the Nile's yearly flood, which spread fertile black silt across the fields.", "egypt*"),
    ("hist-08", "The Louvre Pyramid", "The glass and metal pyramid in the courtyard of the Louvre in Paris was designed by I. M. Pei and opened in 1989.", "pyramid* paris"),
    ("hist-09", "Pont du Gard", "The Pont du Gard in southern France is a three-tiered Roman aqueduct bridge that carried water to the city of Nîmes.", "rome* bridge*"),
    ("hist-10", "Alcántara Bridge", "Built under the emperor Trajan, the Roman bridge at Alcántara in Spain still carries traffic across the river Tagus.", "rome* bridge*"),
    ("hist-11", "Roman roads", "Roman roads were built in layers of stone, gravel and sand with a curved surface so that rain drained away to the sides.", "rome* road"),
    ("hist-12", "The Colosseum", "The Colosseum in Rome could seat some fifty thousand spectators, who came to watch gladiator fights and animal hunts.", "rome*"),
    ("hist-13", "Golden Gate Bridge", "San Francisco's Golden Gate Bridge opened in 1937; its colour, International Orange, was chosen partly to stand out in fog.", "bridge*"),
    ("hist-14", "Brooklyn Bridge", "When it opened in 1883, the Brooklyn Bridge was the longest suspension bridge in the world and the first to hang from steel wire cables.", "bridge*"),
    ("hist-15", "Pons Fabricius", "The Pons Fabricius, built in 62 BC, is the oldest bridge in Rome still standing in its original form, linking Tiber Island to the riverbank.", "rome* bridge*"),
    # ---- music
    ("mus-01", "Violin", "The violin has four strings tuned in fifths and is played with a horsehair bow; the most prized were made by Stradivari in Cremona.", "string* violin"),
    ("mus-02", "Cello", "The cello is played seated and held between the knees; its deep voice spans roughly the range of the human voice.", "string*"),
    ("mus-03", "Concert harp", "A concert harp has 47 strings and seven pedals that shift each note up or down a semitone.", "string*"),
    ("mus-04", "Sitar", "The sitar, central to Hindustani classical music, has sympathetic strings beneath the frets that ring without ever being plucked.", "string*"),
    ("mus-05", "Acoustic guitar", "An acoustic guitar's hollow body amplifies the vibration of its six steel or nylon strings.", "string* guitar*"),
    ("mus-06", "Electric guitar", "Electric guitars use magnetic pickups to turn string vibrations into a signal for an amplifier; the Fender Stratocaster appeared in 1954.", "string* guitar*"),
    ("mus-07", "First guitar chords", "Beginners on the guitar usually start with open chords such as G, C and D, which are enough for thousands of popular songs.", "string guitar*"),
    ("mus-08", "Drum kit", "A standard drum kit has a bass drum played with a foot pedal, a snare drum, tom-toms and cymbals.", "percussion*"),
    ("mus-09", "Trumpet", "The trumpet changes pitch with three valves and the player's lip tension; jazz players often use a mute for a softer tone.", "brass*"),
    ("mus-10", "Flute", "The modern flute is made of metal but is still a woodwind, because its sound comes from air split across an edge.", "woodwind*"),
    ("mus-11", "Banjo", "The banjo's bright twang comes from strings stretched over a drum-like skin; the instrument descends from West African lutes.", "string*"),
    ("mus-12", "Ukulele", "The ukulele, a small four-string cousin of the guitar, became popular in Hawaii in the late nineteenth century.", "string*"),
    ("mus-13", "Pipe organ", "A pipe organ makes its sound by driving air through ranks of pipes, some of them taller than a house.", "organ*"),
    ("mus-14", "Changing guitar strings", "Guitar strings lose their brightness as sweat and dirt build up, so many players replace them every few months.", "string guitar*"),
    ("mus-15", "Making a violin", "Violin makers carve the top from spruce and the back from maple, then finish the instrument with many thin coats of varnish.", "string* violin"),
    # ---- weather
    ("wx-01", "How hurricanes form", "Hurricanes form over warm tropical oceans, where rising moist air releases the heat that powers a spinning storm; they bring torrential rain and storm surges.", "storm* rain hurricane*"),
    ("wx-02", "Haboobs", "A haboob is a wall of sand and dust that sweeps across a desert when strong downdrafts from a distant thunderstorm hit dry ground.", "storm* dust"),
    ("wx-03", "Dry thunderstorms", "In a dry thunderstorm, rain evaporates before it reaches the ground, so lightning strikes parched land and often starts wildfires.", "storm*"),
    ("wx-04", "The Indian monsoon", "The Indian monsoon brings about three quarters of the country's yearly rainfall between June and September.", "rain*"),
    ("wx-05", "Hail", "Hailstones grow as updrafts carry them again and again through the freezing upper layers of a thunderstorm, which then pours down rain and hail together.", "storm* rain"),
    ("wx-06", "Tornadoes", "Tornadoes form beneath supercell thunderstorms, which also bring heavy rain and large hail; Oklahoma and Kansas see many each spring.", "storm* rain"),
    ("wx-07", "Rain gauges", "A rain gauge is a simple cylinder that collects rainfall; meteorologists report the totals in millimetres.", "rain*"),
    ("wx-08", "Drought", "A drought is a long period of unusually low rainfall that dries out soil, shrinks reservoirs and damages crops.", "drought*"),
    ("wx-09", "Rainbows", "A rainbow appears when sunlight is bent and reflected inside raindrops, with the sun behind the observer.", "rain*"),
    ("wx-10", "Saharan sandstorms", "Saharan sandstorms can lift millions of tonnes of dust that the winds carry across the Atlantic, where it fertilises the Amazon rainforest.", "storm* dust"),
    ("wx-11", "Typhoons", "Typhoons are the same kind of storm as hurricanes but form in the northwestern Pacific; the Philippines is hit by many each year, each bringing flooding rain.", "storm* rain hurricane"),
    ("wx-12", "Fog", "Fog is a cloud at ground level that forms when moist air cools to its dew point, typically on calm, clear nights.", "fog*"),
    ("wx-13", "Snowflakes", "No two snowflakes are exactly alike, yet all of them have six-fold symmetry because of the way water molecules bond into ice.", "snow*"),
    ("wx-14", "Acid rain", "Acid rain forms when sulphur dioxide and nitrogen oxides from burning coal react with water in clouds; it damages forests and lakes.", "rain* coal"),
    ("wx-15", "European windstorms", "Winter windstorms in northern Europe bring gusts above 150 kilometres per hour together with heavy rain, toppling trees and cutting power.", "storm* rain"),
    # ---- transport
    ("tr-01", "Electric car range", "Most new electric cars can travel 300 to 500 kilometres on a full charge, and a fast charger can add 200 kilometres in about twenty minutes.", "electric* car*"),
    ("tr-02", "E-bikes", "Electric bicycles have a small motor that assists pedalling up to 25 kilometres per hour in the EU, which makes hilly commutes much easier.", "electric* bike*"),
    ("tr-03", "Electric buses", "The Chinese city of Shenzhen replaced its entire fleet of more than sixteen thousand city buses with electric ones by 2017.", "electric* bus*"),
    ("tr-04", "Shinkansen", "Japan's Shinkansen bullet trains have run on electrified lines since 1964, reaching 320 kilometres per hour with an average delay of under a minute.", "train* japan* electric"),
    ("tr-05", "Hybrid cars", "A hybrid car pairs a petrol engine with an electric motor and a small battery that recharges whenever the car brakes.", "car* electric"),
    ("tr-06", "Electric scooters", "Shared electric scooters appeared in many cities around 2018; riders unlock them with a phone app and leave them on the pavement.", "electric* scooter*"),
    ("tr-07", "Diesel trucks", "Long-haul trucks mostly run on diesel, because its high energy density suits heavy loads over long distances.", "truck*"),
    ("tr-08", "Tyre pressure", "Checking tyre pressure every month improves a car's fuel economy and makes its braking more predictable.", "car*"),
    ("tr-09", "Cycling in Copenhagen", "More than 40 percent of trips to work or school in Copenhagen are made by bicycle, helped by wide, separated cycle lanes.", "bike*"),
    ("tr-10", "Electric car batteries", "Electric car batteries usually come with an eight-year guarantee and tend to keep more than 80 percent of their capacity after 200,000 kilometres.", "electric* car* battery"),
    ("tr-11", "Shanghai maglev", "Shanghai's maglev train floats above its guideway, lifted and pushed by electromagnets, and reaches 431 kilometres per hour on the run to the airport.", "train* electric"),
    ("tr-12", "Tokyo's commuter trains", "Tokyo's commuter railways carry tens of millions of passengers a day, and stations once employed staff to push riders into crowded carriages.", "train* japan*"),
    ("tr-13", "Sushi", "Sushi began as a way of preserving fish in fermented rice; the quick version with vinegared rice appeared in Edo, today's Tokyo, in the 1820s.", "japan* rice"),
    ("tr-14", "Cherry blossom", "Each spring, people across Japan gather under blooming cherry trees for hanami, picnics that celebrate the brief beauty of the blossom.", "japan* tree"),
    ("tr-15", "Steam locomotives", "Steam locomotives burned coal to boil water, and the expanding steam pushed pistons that turned the wheels.", "train* coal"),
    ("tr-16", "Electric ferries", "Norway runs dozens of battery-electric car ferries across its fjords, recharging them at each dock during the few minutes of loading.", "electric* ferry*"),
    # ---- sea life
    ("sea-01", "Great white sharks", "Great white sharks ambush seals from below, striking so fast that they sometimes launch their whole body out of the water.", "shark*"),
    ("sea-02", "Sharks at a whale carcass", "When a dead whale drifts at sea, tiger sharks and great whites gather around it for days to feed on its blubber.", "shark* whale*"),
    ("sea-03", "Killer whales hunting sharks", "Off South Africa, pairs of killer whales, or orcas, have been seen killing great white sharks and eating only their livers.", "shark* whale* toothed"),
    ("sea-04", "Humpback song", "Male humpback whales sing long, complex songs that change gradually over a season and spread from one population to another.", "whale* baleen"),
    ("sea-05", "Blue whale", "The blue whale, the largest animal ever known, filters up to four tonnes of krill a day through its baleen plates.", "whale* baleen"),
    ("sea-06", "Sperm whales", "Sperm whales dive more than a kilometre to hunt giant squid, using clicks of sound to find their prey in the dark.", "whale* toothed"),
    ("sea-07", "Whale shark", "Despite its name, the whale shark is a fish, not a whale: the largest shark alive, it feeds on plankton and is harmless to divers.", "shark*"),
    ("sea-08", "Coral bleaching", "When the sea grows too warm, corals expel the algae living in their tissues and turn white; prolonged bleaching kills the reef.", "coral*"),
    ("sea-09", "Shark finning", "Tens of millions of sharks are killed each year for their fins, which end up in soup, pushing several species toward extinction.", "shark*"),
    ("sea-10", "Narwhal", "The narwhal's spiral tusk is an overgrown tooth up to three metres long, and males may use it to sense changes in the water.", "whale* toothed"),
    ("sea-11", "Beluga", "Belugas are white Arctic whales nicknamed sea canaries for their whistles, chirps and clicks.", "whale* toothed"),
    ("sea-12", "Octopus camouflage", "An octopus can change the colour and texture of its skin in a fraction of a second to vanish against rock or coral.", "octopus*"),
    ("sea-13", "Grey whale migration", "Grey whales travel some 16,000 kilometres a year between Arctic feeding grounds and the warm lagoons of Baja California, where they give birth.", "whale* baleen migration"),
    ("sea-14", "Hammerhead sharks", "Hammerhead sharks sweep their wide heads, packed with electrical sensors, over the seabed to find stingrays buried in the sand.", "shark*"),
    ("sea-15", "Cookiecutter sharks", "Cookiecutter sharks leave round bite scars on whales and dolphins by latching on and spinning to carve out a plug of flesh.", "shark* whale*"),
    ("sea-16", "Sea otters", "Sea otters float on their backs and crack open sea urchins with stones, protecting kelp forests from being grazed bare.", "mammal*"),
    # ---- health
    ("hl-01", "Painkillers for headaches", "Ibuprofen and paracetamol relieve most tension headaches, but taking painkillers too often can itself cause rebound headaches.", "headache* medication"),
    ("hl-02", "Cold compress", "A cold pack on the forehead or neck narrows blood vessels and can ease a throbbing headache without any pills.", "headache* nonmed"),
    ("hl-03", "Water for a headache", "Even mild dehydration can trigger a headache; a large glass of water and some rest often clear it within an hour.", "headache* nonmed"),
    ("hl-04", "Triptans for migraine", "Triptans are prescription drugs that stop a migraine attack by narrowing swollen blood vessels around the brain.", "headache* medication"),
    ("hl-05", "Caffeine in headache tablets", "Caffeine is added to some headache tablets because it helps painkillers work faster, yet giving up coffee abruptly can cause headaches of its own.", "headache* medication caffeine"),
    ("hl-06", "Massage for tension headaches", "Massaging the neck and temples relaxes the tight muscles behind tension headaches, and regular stretching helps keep them from coming back.", "headache* nonmed"),
    ("hl-07", "Sleep cycles", "A night's sleep runs through four or five cycles of about ninety minutes, each moving from light sleep to deep sleep and then to dreaming REM sleep.", "sleep*"),
    ("hl-08", "Exercise and sleep quality", "People who exercise regularly fall asleep faster and spend more time in deep sleep, though a hard workout right before bed keeps some of them awake.", "sleep* exercise*"),
    ("hl-09", "Morning jogging and sleep", "In a study of adults who started jogging every morning, participants slept longer and woke less often after twelve weeks.", "sleep* exercise*"),
    ("hl-10", "Strength training", "Lifting weights twice a week builds muscle and bone density, which matters more and more with age.", "exercise*"),
    ("hl-11", "Vitamin D", "The skin makes vitamin D in sunlight, so in northern winters many people need supplements to keep their bones healthy.", "vitamin*"),
    ("hl-12", "Screens at bedtime", "Phone and tablet screens emit blue light that suppresses melatonin, so reading on a phone late at night can delay sleep.", "sleep*"),
    ("hl-13", "Brisk walking", "Brisk walking for thirty minutes a day lowers blood pressure and the risk of heart disease.", "exercise*"),
    ("hl-14", "Vitamin C and colds", "Vitamin C does not prevent colds in most people, although taking it regularly may make them slightly shorter.", "vitamin*"),
    ("hl-15", "Evening yoga", "Gentle evening yoga with slow breathing calms the nervous system and helps many people with insomnia fall asleep.", "sleep* exercise"),
    # ---- energy
    ("en-01", "Wind turbines", "Modern wind turbines have blades longer than eighty metres and swing round automatically to face the wind.", "wind* renewable"),
    ("en-02", "Offshore wind farms", "Offshore wind farms catch the stronger, steadier winds at sea, and the North Sea hosts many of the largest.", "wind* renewable"),
    ("en-03", "Solar panels", "Photovoltaic panels turn sunlight directly into electricity; a typical rooftop panel converts about a fifth of the light that falls on it.", "solar* renewable"),
    ("en-04", "Hydroelectric dams", "Hydroelectric dams release water through turbines, and Norway gets about nine tenths of its electricity this way.", "hydro* renewable"),
    ("en-05", "Geothermal power stations", "Geothermal power stations tap steam from hot rock deep underground and run day and night whatever the weather.", "geothermal* renewable"),
    ("en-06", "Tidal power", "Tidal power stations harness the predictable rise and fall of the sea, as the plant on the Rance estuary in France has done since 1966.", "tidal* renewable"),
    ("en-07", "Coal power", "Coal-fired power stations are the largest single source of carbon dioxide emissions from electricity generation worldwide.", "coal* fossil"),
    ("en-08", "Gas power plants", "Gas power plants can ramp up quickly to meet the evening peak in demand, but burning gas still emits carbon dioxide.", "fossil*"),
    ("en-09", "Nuclear power", "Nuclear reactors split uranium atoms to release heat, producing low-carbon electricity but also long-lived radioactive waste.", "nuclear*"),
    ("en-10", "Wind turbines and birds", "Wind turbines kill some birds, especially birds of prey, but far fewer than domestic cats or collisions with windows do.", "wind* renewable bird flying cat"),
    ("en-11", "Home batteries", "A home battery stores surplus solar power from the afternoon so that it can be used in the evening.", "battery* solar renewable"),
    ("en-12", "Solar cookers", "A solar cooker focuses sunlight with reflective panels to heat a pot, which helps where firewood is scarce.", "solar* renewable"),
    ("en-13", "Wave energy", "Wave energy devices bob on the surface or sit on the seabed, converting the motion of ocean waves into electricity.", "wave* renewable"),
    ("en-14", "Biomass power", "Biomass power stations burn wood pellets or crop waste; whether this really counts as low-carbon depends on how the fuel is grown.", "biomass* renewable"),
    ("en-15", "When the wind drops", "Because wind speeds vary, grids pair wind farms with storage, hydropower or gas plants to keep the lights on when the air is still.", "wind* renewable"),
    # ---- computing
    ("tech-01", "Password managers", "A password manager creates a long random password for every site and locks them all behind one master password.", "password* security"),
    ("tech-02", "Two-factor authentication", "Two-factor authentication asks for a second proof of identity, such as a code from a phone app, so a stolen password alone is not enough to get in.", "security* password"),
    ("tech-03", "Phishing", "Phishing emails imitate banks or colleagues to trick people into typing their passwords into a fake login page.", "security* password"),
    ("tech-04", "Smartphone battery life", "Dimming the screen, turning off background app refresh and avoiding extreme heat all help a smartphone battery last longer.", "smartphone* battery*"),
    ("tech-05", "Lithium-ion ageing", "Lithium-ion batteries age faster when kept at full charge, which is why some phones pause charging at 80 percent overnight.", "battery* smartphone"),
    ("tech-06", "Python", "Python is a programming language known for its readable code and is widely used in data science, web development and automation.", "programming* python*"),
    ("tech-07", "Rust", "Rust is a systems programming language that prevents memory errors at compile time without needing a garbage collector.", "programming*"),
    ("tech-08", "JavaScript", "JavaScript runs in every web browser and lets pages respond to clicks and update without reloading.", "programming*"),
    ("tech-09", "Pythons", "Pythons are non-venomous snakes that kill by constriction; the reticulated python of Southeast Asia can grow longer than six metres.", "snake*"),
    ("tech-10", "Learning to code", "Many beginners learn to code with Python or Scratch before moving on to languages such as Java or C.", "programming* python"),
    ("tech-11", "SQL", "SQL is the standard language for querying relational databases, with statements such as SELECT, JOIN and GROUP BY.", "programming*"),
    ("tech-12", "The 3-2-1 backup rule", "The 3-2-1 backup rule means keeping three copies of your data, on two kinds of media, with one copy off site.", "backup*"),
    ("tech-13", "Wi-Fi coverage", "Wi-Fi signals weaken as they pass through walls and floors, so a router placed centrally and high up covers a home better.", "network*"),
    ("tech-14", "Screen time", "Many phones report daily screen time, which helps users notice how many hours they spend in social media apps.", "smartphone*"),
    ("tech-15", "Haskell", "Haskell is a purely functional programming language in which functions have no side effects and evaluation is lazy.", "programming*"),
    ("tech-16", "Python for data science", "Data scientists rely on Python libraries such as pandas for tables and scikit-learn for machine learning.", "programming* python*"),
    # ---- insects
    ("ins-01", "A honeybee's sting", "A worker honeybee's barbed sting lodges in the skin, and the bee dies after using it.", "bee* sting"),
    ("ins-02", "Stingless bees", "Stingless bees of the tropics defend their nests by biting instead, and the Maya kept them for honey for centuries.", "bee* nosting"),
    ("ins-03", "Drones", "Male honeybees, called drones, have no sting at all; their only task is to mate with a queen.", "bee* nosting"),
    ("ins-04", "Bumblebees", "Bumblebees can sting more than once because their stings are smooth, but they rarely do so unless handled.", "bee* sting"),
    ("ins-05", "Wasps", "Unlike honeybees, wasps can sting again and again, and late-summer workers become aggressive around sweet food.", "wasp* sting"),
    ("ins-06", "Colony collapse", "Colony collapse disorder, in which worker bees abandon their hive, has been linked to parasites, pesticides and poor nutrition.", "bee*"),
    ("ins-07", "Leafcutter ants", "Leafcutter ants do not eat the leaves they carry; they feed them to a fungus garden, and the colony eats the fungus.", "ant*"),
    ("ins-08", "Monarch butterflies", "Monarch butterflies travel up to 4,500 kilometres to spend the winter in the mountain forests of central Mexico.", "butterfly* migration"),
    ("ins-09", "Fireflies", "Fireflies make cold light in their abdomen through a chemical reaction and flash coded patterns to attract mates.", "insect*"),
    ("ins-10", "Mosquito bites", "Only female mosquitoes bite, because they need the protein in blood to develop their eggs.", "mosquito*"),
    ("ins-11", "The waggle dance", "Honeybees tell their nestmates where flowers are through a waggle dance whose angle and length encode direction and distance.", "bee*"),
    ("ins-12", "Scorpions", "Scorpions are arachnids, not insects; their sting is at the tip of the tail, and only a few species are dangerous to people.", "scorpion* sting"),
    ("ins-13", "Beekeeping", "Beekeepers calm their bees with smoke before opening a hive and wear veils, because honeybees defend the colony with their stings.", "bee* sting"),
    ("ins-14", "Dragonflies", "Dragonflies catch other insects in mid-air and can fly in any direction, even backwards.", "insect* flying"),
    ("ins-15", "Pollinators", "About a third of the food we eat depends on pollinators such as bees, hoverflies and butterflies.", "bee pollination*"),
    # ---- food
    ("food-01", "Vegan cheese", "Vegan cheese is usually made from cashews or coconut oil and cultured with bacteria to develop a tangy flavour without any milk.", "cheese* nodairy"),
    ("food-02", "Cheddar", "Cheddar is a hard cow's milk cheese first made in the Somerset village of Cheddar, and it grows sharper as it ages.", "cheese* dairy"),
    ("food-03", "Lactose intolerance", "People with lactose intolerance lack enough of the enzyme lactase to digest milk sugar, though hard cheeses contain very little lactose.", "dairy*"),
    ("food-04", "Oat milk", "Oat milk is made by blending oats with water and straining the mixture; it foams well, which made it popular in cafés.", "nodairy"),
    ("food-05", "Tofu", "Tofu is made by curdling soy milk and pressing the curds into blocks, much as cheese is made from milk.", "soy*"),
    ("food-06", "Mozzarella", "Fresh mozzarella is made from the milk of water buffalo in Campania, and the curd is stretched in hot water until smooth.", "cheese* dairy"),
    ("food-07", "Nutritional yeast", "Nutritional yeast flakes give vegan dishes a cheesy flavour without any dairy, and they are often fortified with vitamin B12.", "yeast* nodairy"),
    ("food-08", "Paneer", "Paneer is an Indian fresh cheese made by curdling hot milk with lemon juice; it does not melt, so it keeps its shape in curries.", "cheese* dairy"),
    ("food-09", "Cashew cheese", "Soaked cashews blended with lemon juice, garlic and miso make a spreadable plant-based cheese that contains no milk at all.", "cheese* nodairy"),
    ("food-10", "Blue cheese", "Blue cheeses such as Roquefort are pierced with needles so that air can reach the Penicillium mould growing inside.", "cheese* dairy"),
    ("food-11", "Olive oil", "Extra virgin olive oil is pressed without heat or solvents and keeps more of the fruit's peppery flavour.", "oil*"),
    ("food-12", "Fermented foods", "Kimchi, sauerkraut and yoghurt are all fermented by lactic acid bacteria, which sour the food and help preserve it.", "fermented* dairy"),
    ("food-13", "Replacing eggs in baking", "In vegan baking, a tablespoon of ground flaxseed mixed with water can replace one egg as a binder.", "vegan*"),
    ("food-14", "Honey", "Honey hardly ever spoils: its low water content and acidity stop bacteria from growing.", "honey*"),
    ("food-15", "Coconut yoghurt", "Coconut yoghurt is fermented with the same live cultures as ordinary yoghurt but made from coconut milk, so it suits people who avoid dairy.", "nodairy fermented"),
    # ---- sport
    ("sp-01", "Tennis elbow", "Tennis elbow is a painful overload of the tendons on the outside of the elbow; despite the name, most cases come from other repetitive work such as painting or typing.", "tennis* injury*"),
    ("sp-02", "Wimbledon", "Wimbledon is the oldest tennis tournament in the world, played on grass courts in London since 1877.", "tennis*"),
    ("sp-03", "The tennis serve", "A powerful tennis serve comes from the legs and trunk rotating in sequence, not from the arm alone.", "tennis*"),
    ("sp-04", "Shoulder injuries in tennis", "Tennis players often suffer shoulder impingement from thousands of overhead serves, and strengthening the rotator cuff helps prevent it.", "tennis* injury*"),
    ("sp-05", "Runner's knee", "Runner's knee causes a dull ache around the kneecap and is often linked to weak hip muscles and sudden jumps in weekly mileage.", "running* injury*"),
    ("sp-06", "Marathon distance", "The marathon distance of 42.195 kilometres goes back to the 1908 London Olympics, whose course ran from Windsor Castle to the royal box in the stadium.", "running*"),
    ("sp-07", "Minimalist running shoes", "Minimalist running shoes have thin soles with almost no cushioning, encouraging a forefoot strike closer to barefoot running.", "running* shoes*"),
    ("sp-08", "Maximalist running shoes", "Maximalist shoes with thick foam midsoles absorb impact and are popular with ultrarunners on long, hard roads.", "running* shoes*"),
    ("sp-09", "Ankle sprains", "Ankle sprains are the most common basketball injury, usually from landing on another player's foot after a jump.", "basketball* injury*"),
    ("sp-10", "Offside", "In football, a player is offside when nearer to the opponents' goal line than both the ball and the second-last defender at the moment the ball is played to them.", "football*"),
    ("sp-11", "Swimming strokes", "Freestyle is the fastest swimming stroke, while butterfly is the most tiring, demanding a powerful dolphin kick.", "swimming*"),
    ("sp-12", "Racket strings", "Looser racket strings give a tennis player more power and tighter ones more control, so professionals restring before every match.", "tennis*"),
    ("sp-13", "Concussion in rugby", "Rugby now removes players with a suspected concussion from the pitch for a head injury assessment before they may return.", "rugby* injury*"),
    ("sp-14", "Barefoot running", "Barefoot running strengthens the small muscles of the foot, but switching too quickly can cause stress fractures.", "running* injury"),
    ("sp-15", "Pickleball", "Pickleball mixes elements of tennis, badminton and table tennis and is played with a paddle and a perforated plastic ball.", "pickleball*"),
]

# Compositional queries: (qid, text, tree, must, must_not, any_of). A tree leaf is the sub-query text.
COMPOSITIONAL = [
    ("1", "tea without caffeine", {"op": "not", "a": "tea", "b": "caffeine"}, ["tea"], ["caffeine"], []),
    ("2", "coffee but not espresso", {"op": "not", "a": "coffee", "b": "espresso"}, ["coffee"], ["espresso"], []),
    ("3", "dog training without treats", {"op": "not", "a": "dog training", "b": "treats"}, ["dog", "training"], ["treats"], []),
    ("4", "chocolate cake without flour", {"op": "not", "a": "chocolate cake", "b": "flour"}, ["cake", "chocolate"], ["flour"], []),
    ("5", "planets without moons", {"op": "not", "a": "planets", "b": "moons"}, ["planet", "nomoons"], ["hasmoons"], []),
    ("6", "birds that do not fly", {"op": "not", "a": "birds", "b": "flying"}, ["bird", "flightless"], ["flying"], []),
    ("7", "houseplants not toxic to cats", {"op": "not", "a": "houseplants", "b": "toxic to cats"}, ["houseplant", "petsafe"], ["toxic"], []),
    ("8", "pasta sauce without tomatoes", {"op": "not", "a": "pasta sauce", "b": "tomatoes"}, ["pasta", "sauce"], ["tomato"], []),
    ("9", "pyramids not in Egypt", {"op": "not", "a": "pyramids", "b": "Egypt"}, ["pyramid"], ["egypt"], []),
    ("10", "string instruments but not guitars", {"op": "not", "a": "string instruments", "b": "guitars"}, ["string"], ["guitar"], []),
    ("11", "storms without rain", {"op": "not", "a": "storms", "b": "rain"}, ["storm"], ["rain"], []),
    ("12", "electric vehicles but not cars", {"op": "not", "a": "electric vehicles", "b": "cars"}, ["electric"], ["car"], []),
    ("13", "whales without baleen", {"op": "not", "a": "whales", "b": "baleen"}, ["whale", "toothed"], ["baleen"], []),
    ("14", "headache relief without medication", {"op": "not", "a": "headache relief", "b": "medication"}, ["headache", "nonmed"], ["medication"], []),
    ("15", "programming languages but not Python", {"op": "not", "a": "programming languages", "b": "Python"}, ["programming"], ["python"], []),
    ("16", "cheese without dairy", {"op": "not", "a": "cheese", "b": "dairy"}, ["cheese", "nodairy"], ["dairy"], []),
    ("17", "cats and dogs living together", {"op": "and", "a": "cats", "b": "dogs"}, ["cat", "dog"], [], []),
    ("18", "water on Mars", {"op": "and", "a": "Mars", "b": "water"}, ["mars", "water"], [], []),
    ("19", "volcanoes in Iceland", {"op": "and", "a": "volcanoes", "b": "Iceland"}, ["volcano", "iceland"], [], []),
    ("20", "mammals that lay eggs", {"op": "and", "a": "mammals", "b": "lay eggs"}, ["mammal", "eggs"], [], []),
    ("21", "vegetables that grow in shade", {"op": "and", "a": "vegetables", "b": "shade"}, ["vegetable", "shade"], [], []),
    ("22", "rice and beans", {"op": "and", "a": "rice", "b": "beans"}, ["rice", "beans"], [], []),
    ("23", "bridges built by the ancient Romans", {"op": "and", "a": "bridges", "b": "ancient Rome"}, ["bridge", "rome"], [], []),
    ("24", "trains in Japan", {"op": "and", "a": "trains", "b": "Japan"}, ["train", "japan"], [], []),
    ("25", "encounters between sharks and whales", {"op": "and", "a": "sharks", "b": "whales"}, ["shark", "whale"], [], []),
    ("26", "volcanoes in Iceland or Hawaii",
     {"op": "and", "a": "volcanoes", "b": {"op": "or", "a": "Iceland", "b": "Hawaii"}}, ["volcano"], [], ["iceland", "hawaii"]),
]

# Ordinary queries: (qid, text, {docid: grade}).
ORDINARY = [
    ("27", "how is cold brew coffee made", {"coffee-02": 2}),
    ("28", "why volcanic ash is dangerous for aircraft", {"volc-14": 2, "volc-01": 1}),
    ("29", "how do hurricanes form", {"wx-01": 2, "wx-11": 1}),
    ("30", "why do leaves change colour in autumn", {"plant-13": 2}),
    ("31", "how to make a smartphone battery last longer", {"tech-04": 2, "tech-05": 1}),
    ("32", "moons of Jupiter", {"space-11": 2, "space-08": 1, "space-17": 1}),
    ("33", "how solar panels generate electricity", {"en-03": 2, "en-11": 1}),
    ("34", "how honeybees communicate", {"ins-11": 2}),
    ("35", "protecting online accounts from stolen passwords", {"tech-02": 2, "tech-01": 1, "tech-03": 1}),
    ("36", "longest animal migrations", {"bird-06": 2, "sea-13": 1, "ins-08": 1}),
    ("37", "Roman town buried by a volcanic eruption", {"volc-06": 2}),
    ("38", "why corals turn white", {"sea-08": 2}),
]


def parse_tags(spec: str) -> tuple[set[str], set[str]]:
    """(all tags, central tags) from 'tea* caffeine'."""
    tags, central = set(), set()
    for tag in spec.split():
        name = tag.rstrip("*")
        tags.add(name)
        if tag.endswith("*"):
            central.add(name)
    return tags, central


# Property tags that qualify a topic (a planet *without* moons) and do not count towards grade 2.
QUALIFIERS = {"nomoons", "flightless", "petsafe", "nonmed", "toothed", "nodairy"}


def judge(tags: set[str], central: set[str], must, must_not, any_of) -> int:
    """Grade of one document for a tag query: 0, 1, or 2 when every positive topic tag is central."""
    if not set(must) <= tags or tags & set(must_not) or (any_of and not tags & set(any_of)):
        return 0
    positive = (set(must) | (tags & set(any_of))) - QUALIFIERS
    return 2 if positive <= central else 1


def build() -> tuple[list[dict], list[tuple[str, str]], list[tuple[str, str, int]], list[dict]]:
    """Corpus rows, topics, qrels rows and composition rows, with consistency checks."""
    ids = [d[0] for d in DOCS]
    assert len(ids) == len(set(ids)), "duplicate document ids"
    tagged = {d[0]: parse_tags(d[3]) for d in DOCS}
    corpus = [{"id": i, "title": t, "text": x} for i, t, x, _ in DOCS]
    topics, qrels, compositions = [], [], []
    known = set().union(*(t for t, _ in tagged.values()))
    for qid, text, tree, must, must_not, any_of in COMPOSITIONAL:
        for tag in [*must, *must_not, *any_of]:
            assert tag in known, f"query {qid}: unknown tag {tag}"
        topics.append((qid, text))
        compositions.append({"id": qid, "query": tree})
        relevant, near_misses = 0, 0
        for doc_id in ids:
            tags, central = tagged[doc_id]
            grade = judge(tags, central, must, must_not, any_of)
            # judged non-relevant: matches one side only, or is excluded by the negated side
            touches = bool(tags & (set(must) | set(any_of) | set(must_not)))
            if grade:
                relevant += 1
                qrels.append((qid, doc_id, grade))
            elif touches:
                near_misses += 1
                qrels.append((qid, doc_id, 0))
        assert relevant >= 2, f"query {qid} has {relevant} relevant documents"
        assert near_misses >= 2, f"query {qid} has no one-sided documents"
        if tree["op"] == "not":  # excluded documents: positive side holds, negated side holds too
            excluded = [d for d in ids if set(must[:1]) <= tagged[d][0] and tagged[d][0] & set(must_not)]
            assert excluded, f"query {qid}: no document matches both sides"
        if tree["op"] == "and" and len(must) == 2:  # documents matching one side only, each way
            for a, b in (must, must[::-1]):
                assert any(a in tagged[d][0] and b not in tagged[d][0] for d in ids), f"query {qid}: no {a}-only doc"
    for qid, text, judged in ORDINARY:
        topics.append((qid, text))
        for doc_id, grade in judged.items():
            assert doc_id in tagged, f"query {qid}: unknown document {doc_id}"
            qrels.append((qid, doc_id, grade))
    return corpus, topics, qrels, compositions


def write(out: Path) -> None:
    """Write corpus.jsonl, topics.tsv, qrels.txt and compositions.jsonl under ``out``."""
    corpus, topics, qrels, compositions = build()
    out.mkdir(parents=True, exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for row in corpus:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    with (out / "topics.tsv").open("w", encoding="utf-8") as f:
        for qid, text in topics:
            f.write(f"{qid}\t{text}\n")
    with (out / "qrels.txt").open("w", encoding="utf-8") as f:
        for qid, doc_id, grade in qrels:
            f.write(f"{qid} 0 {doc_id} {grade}\n")
    with (out / "compositions.jsonl").open("w", encoding="utf-8") as f:
        for row in compositions:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "lsr_lucene" / "data" / "demo"))
    parser.add_argument("--check", action="store_true", help="only run the consistency checks and print counts")
    args = parser.parse_args(argv)
    corpus, topics, qrels, compositions = build()
    rel = sum(1 for *_, g in qrels if g > 0)
    print(f"{len(corpus)} documents, {len(topics)} queries ({len(compositions)} compositional), "
          f"{len(qrels)} judgements ({rel} relevant)", file=sys.stderr)
    if not args.check:
        write(Path(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
