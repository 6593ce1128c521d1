"""Value pools for the dialogue generator: people, places, jobs, pets, diets, hobbies, dishes …

Items are dicts so templates can use several facets of one value (``{v[city]}``, ``{v[spot]}``);
``*_zh`` fields are the Chinese wording, used by the bilingual speakers.
"""

from __future__ import annotations

from typing import Any

V = dict[str, Any]

NAMES_EN = [
    "Maya", "Leo", "Priya", "Tomás", "Hannah", "Kwame", "Sofia", "Daniel", "Aiko", "Marcus",
    "Elena", "Ravi", "Chloe", "Jonas", "Fatima", "Owen", "Lucía", "Sam", "Ingrid", "Mateo",
    "Nadia", "Ethan", "Zoe", "Caleb", "Amara", "Felix", "Rosa", "Gabriel", "Yara", "Nico",
]  # fmt: skip
NAMES_ZH = ["Li Wei", "Chen Jing", "Zhang Min", "Wang Fang", "Liu Yang", "Zhao Lei"]

# people the speakers talk about (siblings, friends, colleagues, distractor acquaintances)
OTHER_PEOPLE = [
    "Ana", "Ben", "Clara", "Dev", "Erin", "Farid", "Greta", "Hugo", "Iris", "Jake", "Kira",
    "Luis", "Mina", "Noah", "Olga", "Pablo", "Quinn", "Rhea", "Sven", "Tara", "Umar", "Vera",
    "Will", "Xena", "Yusuf", "Zara", "Bianca", "Colin", "Dana", "Emil", "Freya", "Gus",
]  # fmt: skip

CITIES: list[V] = [
    dict(city="Lisbon", zh="里斯本", hassle="the trams", spot="the river", weather="mild"),
    dict(city="Denver", zh="丹佛", hassle="the traffic on I-25", spot="Washington Park", weather="snowy"),
    dict(city="Manchester", zh="曼彻斯特", hassle="the rain", spot="the canals", weather="rainy"),
    dict(city="Austin", zh="奥斯汀", hassle="the heat", spot="Lady Bird Lake", weather="hot"),
    dict(city="Melbourne", zh="墨尔本", hassle="the trams", spot="the bay", weather="changeable"),
    dict(city="Toronto", zh="多伦多", hassle="the streetcars", spot="the lakeshore", weather="snowy"),
    dict(city="Seattle", zh="西雅图", hassle="the drizzle", spot="the waterfront", weather="rainy"),
    dict(city="Barcelona", zh="巴塞罗那", hassle="the tourists", spot="Barceloneta beach", weather="sunny"),
    dict(city="Edinburgh", zh="爱丁堡", hassle="the wind", spot="Arthur's Seat", weather="windy"),
    dict(city="Vancouver", zh="温哥华", hassle="the rain", spot="the seawall", weather="rainy"),
    dict(city="Chicago", zh="芝加哥", hassle="the wind", spot="the lakefront", weather="cold"),
    dict(city="Dublin", zh="都柏林", hassle="the buses", spot="the canal", weather="rainy"),
    dict(city="Berlin", zh="柏林", hassle="the U-Bahn works", spot="Tempelhof field", weather="grey"),
    dict(city="Chengdu", zh="成都", hassle="the traffic", spot="People's Park", weather="humid"),
    dict(city="Hangzhou", zh="杭州", hassle="the crowds", spot="West Lake", weather="humid"),
    dict(city="Shenzhen", zh="深圳", hassle="the metro crush", spot="the bay park", weather="hot"),
    dict(city="Kyoto", zh="京都", hassle="the tour buses", spot="the Kamo river", weather="muggy"),
    dict(city="Portland", zh="波特兰", hassle="the bridges", spot="the riverfront", weather="rainy"),
]  # fmt: skip

# places people travel to (events), distinct from home cities so trips are unambiguous
DESTINATIONS: list[V] = [
    dict(place="Iceland", zh="冰岛", why="to see the northern lights", review="the waterfalls were unreal"),
    dict(place="Mexico City", zh="墨西哥城", why="for a friend's wedding", review="the tacos changed my life"),
    dict(place="Crete", zh="克里特岛", why="for a week of doing nothing on a beach", review="the water was so clear"),
    dict(place="the Scottish Highlands", zh="苏格兰高地", why="for a hiking week", review="it rained every day but I loved it"),
    dict(place="Seoul", zh="首尔", why="for a work conference", review="the street food was the highlight"),
    dict(place="Marrakech", zh="马拉喀什", why="with my college roommates", review="the markets were overwhelming in a good way"),
    dict(place="Vienna", zh="维也纳", why="to visit my aunt", review="the cafés alone were worth the trip"),
    dict(place="Patagonia", zh="巴塔哥尼亚", why="for a trekking tour", review="the wind nearly blew me off a ridge"),
    dict(place="Hanoi", zh="河内", why="for a food tour", review="I ate my body weight in noodle soup"),
    dict(place="Norway", zh="挪威", why="to drive the fjord roads", review="every corner was a postcard"),
    dict(place="Tokyo", zh="东京", why="for the cherry blossoms", review="the trains run like clockwork"),
    dict(place="Cape Town", zh="开普敦", why="to see penguins at Boulders Beach", review="Table Mountain at sunset was magic"),
    dict(place="Montreal", zh="蒙特利尔", why="for the jazz festival", review="the bagels are better than New York's"),
    dict(place="Sicily", zh="西西里", why="for my parents' anniversary", review="Mum cried at the cathedral"),
    dict(place="Yunnan", zh="云南", why="to see the rice terraces", review="the mountains were breathtaking"),
]  # fmt: skip

JOBS: list[V] = [
    dict(title="nurse", zh="护士", place="the hospital", activity="running between patients on the cardiac ward",
         activity_zh="在心内科病房跑来跑去照顾病人", downside="night shifts", expertise="a nasty-looking rash"),
    dict(title="software developer", zh="程序员", place="the office", activity="chasing a bug in our payment code",
         activity_zh="追一个支付系统里的bug", downside="on-call weeks", expertise="why a laptop keeps crashing"),
    dict(title="high school teacher", zh="中学老师", place="school", activity="marking thirty essays on Macbeth",
         activity_zh="批改三十篇作文", downside="parents' evenings", expertise="helping a teenager with an essay"),
    dict(title="chef", zh="厨师", place="the restaurant", activity="prepping sauces for a hundred covers",
         activity_zh="给一百多位客人备菜", downside="working every weekend", expertise="planning a dinner-party menu"),
    dict(title="architect", zh="建筑师", place="the studio", activity="redrawing floor plans for a client who keeps changing her mind",
         activity_zh="给一个老改主意的客户改平面图", downside="endless revisions", expertise="a house extension plan"),
    dict(title="electrician", zh="电工", place="a building site", activity="rewiring an old townhouse",
         activity_zh="给一栋老房子重新布线", downside="crawling through lofts", expertise="a fuse that keeps tripping"),
    dict(title="accountant", zh="会计", place="the firm", activity="reconciling quarter-end statements",
         activity_zh="对季度末的账", downside="tax season", expertise="filing a tax return"),
    dict(title="veterinarian", zh="兽医", place="the clinic", activity="stitching up a Labrador who swallowed a sock",
         activity_zh="给一只吞了袜子的拉布拉多做手术", downside="emergency calls", expertise="a dog that won't eat"),
    dict(title="graphic designer", zh="平面设计师", place="the agency", activity="redoing the same logo for the fifth time",
         activity_zh="第五次重做同一个logo", downside="clients who want it 'more pop'", expertise="designing a wedding invitation"),
    dict(title="physiotherapist", zh="理疗师", place="the clinic", activity="helping a runner recover from knee surgery",
         activity_zh="帮一个跑者做膝盖术后康复", downside="back-to-back appointments", expertise="a sore lower back"),
    dict(title="lawyer", zh="律师", place="the office", activity="reading contracts until my eyes crossed",
         activity_zh="看合同看到眼花", downside="billable hours", expertise="a tricky rental contract"),
    dict(title="firefighter", zh="消防员", place="the station", activity="doing ladder drills and then a kitchen-fire call",
         activity_zh="练爬梯子，然后出了一个厨房着火的警", downside="24-hour shifts", expertise="choosing a smoke alarm"),
    dict(title="journalist", zh="记者", place="the newsroom", activity="chasing a source for a story about housing",
         activity_zh="为一篇住房报道追线人", downside="deadlines at midnight", expertise="fact-checking a rumour"),
    dict(title="pharmacist", zh="药剂师", place="the pharmacy", activity="filling prescriptions nonstop",
         activity_zh="不停地配药", downside="standing all day", expertise="whether two medicines are safe together"),
]  # fmt: skip

PETS: list[V] = [
    dict(kind="cat", zh="猫", antic="just knocked a full glass off the table", antic_zh="刚把一杯水从桌上推下去了", pron="she"),
    dict(kind="cat", zh="猫", antic="is sitting on my keyboard again", antic_zh="又坐在我的键盘上了", pron="he"),
    dict(kind="dog", zh="狗", antic="just stole a sock and ran off with it", antic_zh="刚叼着一只袜子跑了", pron="he"),
    dict(kind="dog", zh="狗", antic="is whining at the door for his walk", antic_zh="在门口哼哼着要出去遛", pron="he"),
    dict(kind="rabbit", zh="兔子", antic="just chewed through my phone charger", antic_zh="刚把我的充电线咬断了", pron="she"),
    dict(kind="parrot", zh="鹦鹉", antic="has learned to imitate my ringtone", antic_zh="学会了模仿我的手机铃声", pron="he"),
    dict(kind="tortoise", zh="乌龟", antic="escaped under the sofa again", antic_zh="又爬到沙发底下去了", pron="he"),
    dict(kind="hamster", zh="仓鼠", antic="has been running on his wheel since 3am", antic_zh="从凌晨三点就开始跑轮子", pron="he"),
]  # fmt: skip
PET_NAMES = ["Miso", "Pickle", "Biscuit", "Luna", "Tofu", "Rufus", "Pepper", "Bruno", "Maple",
             "Clover", "Kiwi", "Noodle", "Ziggy", "Olive", "Mochi", "Bean", "Juniper", "Waffles"]  # fmt: skip

DIETS: list[V] = [
    dict(diet="vegetarian", zh="素食", why="I haven't eaten meat since college", why_zh="我大学以后就没吃过肉了",
         forbid={"meat", "fish"}, infer_q="Would {me} enjoy a Brazilian steakhouse dinner?", infer_a="No, {me} doesn't eat meat."),
    dict(diet="vegan", zh="纯素", why="no animal products at all for me, not even cheese", why_zh="我吃纯素，连鸡蛋牛奶都不碰",
         forbid={"meat", "fish", "dairy"}, infer_q="Would a cheese fondue evening be a good plan for {me}?", infer_a="No, {me} is vegan."),
    dict(diet="pescatarian", zh="只吃鱼不吃肉", why="fish is the only meat I eat these days", why_zh="我现在除了鱼别的肉都不吃",
         forbid={"meat"}, infer_q="Would {me} order the pulled pork burger?", infer_a="Unlikely, {me} only eats fish, not meat."),
    dict(diet="gluten-free (coeliac)", zh="不能吃麸质", why="I'm coeliac, so bread and pasta are basically poison for me", why_zh="我有乳糜泻，面包面条都不能碰",
         forbid={"gluten"}, infer_q="Would a bakery crawl be a good day out for {me}?", infer_a="Probably not, {me} can't eat gluten."),
    dict(diet="dairy-free (lactose intolerant)", zh="乳糖不耐受", why="dairy wrecks my stomach every single time", why_zh="我乳糖不耐受，一喝牛奶就肚子疼",
         forbid={"dairy"}, infer_q="Should {me} get the extra-cheese pizza?", infer_a="No, dairy upsets {me}'s stomach."),
]  # fmt: skip

ALLERGIES: list[V] = [
    dict(thing="peanuts", reaction="my throat swells up", avoid="peanut", infer_q="Would a satay chicken dinner be safe for {me}?",
         infer_a="No, {me} is allergic to peanuts."),
    dict(thing="shellfish", reaction="I break out in hives within minutes", avoid="prawns and crab",
         infer_q="Is a seafood platter a safe order for {me}?", infer_a="No, {me} is allergic to shellfish."),
    dict(thing="pollen", reaction="I sneeze for weeks every spring", avoid="flower fields in May",
         infer_q="Would {me} enjoy a picnic in a wildflower meadow in May?", infer_a="Probably not, {me} has hay fever."),
    dict(thing="bee stings", reaction="I have to carry an EpiPen everywhere", avoid="beehives",
         infer_q="Should {me} volunteer at a beekeeping farm?", infer_a="No, {me} is allergic to bee stings."),
    dict(thing="penicillin", reaction="I came out in a rash all over last time", avoid="certain antibiotics",
         infer_q="Should a doctor prescribe {me} amoxicillin without checking?", infer_a="No, {me} reacts to penicillin."),
]  # fmt: skip

HOBBIES: list[V] = [
    dict(hobby="rock climbing", zh="攀岩", did="my forearms are still shaking from the bouldering wall",
         did2="I finally sent that overhang route I've been projecting for a month", did_zh="在攀岩馆爬了一晚上，手臂都在抖",
         gift="a new chalk bag", outdoor=True),
    dict(hobby="pottery", zh="陶艺", did="I finally threw a bowl on the wheel that didn't collapse",
         did2="my glaze firing came out of the kiln today and only one mug cracked", did_zh="终于在拉坯机上做出了一个没塌的碗",
         gift="a set of glazes", outdoor=False),
    dict(hobby="trail running", zh="越野跑", did="I did twelve miles on the ridge trail before breakfast",
         did2="I signed up for my first 50k on the mountain trails", did_zh="早饭前在山脊小路上跑了二十公里",
         gift="new trail shoes", outdoor=True),
    dict(hobby="birdwatching", zh="观鸟", did="I spotted a kingfisher at the reservoir at six this morning",
         did2="I added a red kite to my list, it circled right over my head", did_zh="早上六点在水库边看到了一只翠鸟",
         gift="a good pair of binoculars", outdoor=True),
    dict(hobby="woodworking", zh="木工", did="I sanded the walnut table top all afternoon in the garage",
         did2="I cut my first dovetail joint and it actually fits", did_zh="在车库里打磨了一下午胡桃木桌面",
         gift="a set of chisels", outdoor=False),
    dict(hobby="film photography", zh="胶片摄影", did="I shot a whole roll of black and white film down at the harbour",
         did2="I developed my own negatives for the first time in the bathroom", did_zh="在港口拍完了一整卷黑白胶卷",
         gift="a new lens", outdoor=True),
    dict(hobby="sourdough baking", zh="做酸面包", did="my starter finally doubled overnight and the loaf had a proper ear",
         did2="I fed the starter at midnight so I could bake before work", did_zh="我的酵头终于一夜翻倍，烤出来的面包开口很漂亮",
         gift="a proofing basket", outdoor=False),
    dict(hobby="chess", zh="国际象棋", did="I lost three blitz games in a row online last night",
         did2="I finally beat the club champion with a queen sacrifice", did_zh="昨晚在网上连输了三盘快棋",
         gift="a wooden chess set", outdoor=False),
    dict(hobby="gardening", zh="种菜养花", did="the tomatoes on my allotment are finally turning red",
         did2="slugs ate half my lettuces overnight, I could cry", did_zh="我菜园里的番茄终于开始变红了",
         gift="a pair of good pruning shears", outdoor=True),
    dict(hobby="salsa dancing", zh="萨尔萨舞", did="we learned a new turn pattern in class and I stepped on everyone's toes",
         did2="our dance group is performing at the social next month", did_zh="舞蹈课学了一个新的转圈动作，我踩了所有人的脚",
         gift="proper dance shoes", outdoor=False),
    dict(hobby="sea kayaking", zh="海上皮划艇", did="I paddled out to the lighthouse and back on Sunday",
         did2="I capsized practising my roll and swallowed half the bay", did_zh="周日划皮划艇到灯塔又划回来",
         gift="a waterproof dry bag", outdoor=True),
    dict(hobby="knitting", zh="织毛衣", did="I'm halfway through a sweater and the sleeves are two different lengths",
         did2="I finished the cable-knit scarf just in time for the cold snap", did_zh="毛衣织了一半，两只袖子一长一短",
         gift="some nice merino yarn", outdoor=False),
    dict(hobby="road cycling", zh="公路骑行", did="I did a sixty-kilometre loop on the road bike this morning",
         did2="I climbed the big hill out of town without stopping for the first time", did_zh="早上骑公路车绕了六十公里",
         gift="a bike computer", outdoor=True),
    dict(hobby="watercolour painting", zh="水彩画", did="I painted the view from my balcony and it actually looks like the view",
         did2="I've filled a whole sketchbook with little watercolours of cafés", did_zh="画了一幅阳台外的风景，居然还挺像",
         gift="a travel paint set", outdoor=False),
    dict(hobby="calligraphy", zh="书法", did="I practised brush strokes for two hours and my wrist is sore",
         did2="my teacher finally said one of my characters had some life in it", did_zh="练了两个小时毛笔字，手腕都酸了",
         gift="a good ink stone", outdoor=False),
]  # fmt: skip

DISHES: list[V] = [
    dict(dish="pho", zh="越南河粉", has={"meat"}),
    dict(dish="mushroom risotto", zh="蘑菇烩饭", has={"dairy"}),
    dict(dish="shakshuka", zh="北非蛋", has=set()),
    dict(dish="pork dumplings", zh="猪肉饺子", has={"meat", "gluten"}),
    dict(dish="paella", zh="西班牙海鲜饭", has={"fish"}),
    dict(dish="mac and cheese", zh="芝士通心粉", has={"dairy", "gluten"}),
    dict(dish="chana masala", zh="鹰嘴豆咖喱", has=set()),
    dict(dish="hotpot", zh="火锅", has={"meat"}),
    dict(dish="mapo tofu", zh="麻婆豆腐", has=set()),
    dict(dish="lasagne", zh="千层面", has={"meat", "dairy", "gluten"}),
    dict(dish="salmon sushi", zh="三文鱼寿司", has={"fish"}),
    dict(dish="pad thai", zh="泰式炒河粉", has=set()),
    dict(dish="lentil soup", zh="扁豆汤", has=set()),
    dict(dish="fish tacos", zh="鱼肉卷饼", has={"fish"}),
    dict(dish="beef noodle soup", zh="牛肉面", has={"meat", "gluten"}),
    dict(dish="falafel wraps", zh="炸豆丸子卷饼", has={"gluten"}),
]  # fmt: skip

INSTRUMENTS: list[V] = [
    dict(inst="piano", piece="a Chopin nocturne", sore="my wrists"),
    dict(inst="cello", piece="the Bach prelude", sore="my left hand"),
    dict(inst="acoustic guitar", piece="a fingerpicking song I've wanted to learn for years", sore="my fingertips"),
    dict(inst="violin", piece="a Vivaldi concerto", sore="my neck"),
    dict(inst="drums", piece="a ridiculous fill from a Rush song", sore="my forearms"),
    dict(inst="saxophone", piece="a jazz standard", sore="my lips"),
    dict(inst="ukulele", piece="a Hawaiian tune", sore="my fingertips"),
]  # fmt: skip

LANGUAGES: list[V] = [
    dict(lang="Japanese", bit="the kanji"), dict(lang="Spanish", bit="the subjunctive"),
    dict(lang="German", bit="the noun genders"), dict(lang="Korean", bit="the honorifics"),
    dict(lang="Italian", bit="the verb endings"), dict(lang="Portuguese", bit="the nasal vowels"),
    dict(lang="Mandarin", bit="the tones"), dict(lang="Greek", bit="the alphabet"),
]  # fmt: skip

DRINKS: list[V] = [
    dict(drink="matcha"), dict(drink="rooibos tea"), dict(drink="chai"), dict(drink="green tea"),
    dict(drink="decaf oat lattes"), dict(drink="kombucha"), dict(drink="hot chocolate"),
]  # fmt: skip

COMMUTES: list[V] = [
    dict(mode="by bike", how="cycling", hassle="got soaked cycling in this morning", vehicle="bike"),
    dict(mode="by train", how="the train", hassle="my train sat outside the station for forty minutes", vehicle="train"),
    dict(mode="on foot", how="walking", hassle="walked in through a hailstorm", vehicle="walk"),
    dict(mode="by car", how="driving", hassle="sat in traffic for an hour on the ring road", vehicle="car"),
    dict(mode="by electric scooter", how="scooting", hassle="my scooter battery died halfway in", vehicle="scooter"),
]  # fmt: skip

RELATIONS = ["sister", "brother", "best friend", "cousin", "old roommate", "colleague"]

PURCHASES = [
    "a secondhand piano", "a cargo bike", "a standing desk", "an espresso machine", "a used Subaru",
    "a drone", "a four-person tent", "a sewing machine", "a robot vacuum", "a telescope",
    "a vintage record player", "an air fryer", "a kayak rack", "a 3D printer",
]  # fmt: skip
PURCHASES_ZH = [
    "一台二手钢琴",
    "一辆电动车",
    "一张升降桌",
    "一台咖啡机",
    "一个扫地机器人",
    "一台投影仪",
]

APPOINTMENTS = [
    ("a dentist appointment", "dentist appointment"), ("an eye test", "eye test"),
    ("a physio session for my shoulder", "physio session"), ("a job interview at a design agency", "job interview"),
    ("my driving test", "driving test"), ("a check-up with my GP", "GP check-up"),
    ("a haircut with a new stylist", "haircut"), ("a mortgage meeting at the bank", "mortgage meeting"),
]  # fmt: skip

RACES = ["a half marathon", "a 10k charity run", "a sprint triathlon", "a chess tournament",
         "a pub quiz final", "a baking competition", "an open-water swim"]  # fmt: skip

CONCERTS = ["Arctic Monkeys", "a tiny jazz trio in a basement bar", "the symphony orchestra",
            "Florence and the Machine", "an indie band nobody has heard of", "a K-pop group",
            "Radiohead's drummer doing a solo set"]  # fmt: skip

EXAMS = ["my advanced first aid course", "the sommelier level one exam", "my scuba certification",
         "the project management certificate", "my motorcycle licence", "the B2 language exam"]  # fmt: skip

# things people watch / read / eat out at: the opinions live in the reply to a question
MOVIES = ["The Glass Harbor", "Nine Winters", "A Quiet Orbit", "The Salt Road", "Paper Lanterns",
          "Midnight at Kestrel Lake", "The Cartographer's Daughter", "Low Tide", "Iron Orchard",
          "The Last Ferry", "Small Hours", "A Field of Red Kites"]  # fmt: skip
BOOKS = ["The Lighthouse Keeper's Almanac", "Borrowed Summers", "The Clockmaker's Apprentice",
         "Cold Water Stories", "A Map of Lost Gardens", "The Orchard Thief", "Salt and Stone",
         "The Thousand-Year Kitchen", "Letters to the Tide", "The Paper Beekeeper"]  # fmt: skip
RESTAURANTS = ["the Georgian place on Mill Street", "the new ramen bar by the station",
               "that Ethiopian restaurant on Fifth", "the rooftop tapas bar", "the dumpling house in the old market",
               "the tiny Lebanese bakery near the park", "the Korean barbecue place downtown",
               "the pizza truck at the brewery"]  # fmt: skip
SHOWS = ["the new season of Quiet Borders", "that baking competition show", "the documentary about octopuses",
         "the Danish crime drama", "the anime series about a cooking club", "the comedy special by Dara"]  # fmt: skip

OPINIONS_POS = [
    "Loved it. The ending completely got me, I sat there through the credits.",
    "Honestly one of the best things I've seen this year, I'm still thinking about it.",
    "So good! I laughed, I cried, I texted three people about it.",
    "Really enjoyed it, a bit slow in the middle but the last half hour was perfect.",
    "Better than I expected. The soundtrack alone was worth it.",
]  # fmt: skip
OPINIONS_NEG = [
    "Ugh, disappointing. Way too long and nothing really happens.",
    "Not for me, I gave up halfway through. Everyone else seems to love it though.",
    "Kind of a letdown, the first part was great and then it just fell apart.",
    "Meh. Pretty to look at, but I couldn't care about anyone in it.",
]  # fmt: skip
FOOD_POS = [
    "Amazing. We ordered way too much and I'd do it again tomorrow.",
    "So good, the bread alone was worth the queue.",
    "Really lovely, tiny place but the staff were so warm. We're going back Friday.",
]  # fmt: skip
FOOD_NEG = [
    "Overpriced, honestly. Tiny portions and we waited an hour.",
    "Not great. Everything was lukewarm and way too salty.",
]  # fmt: skip

# things mentioned once in small talk that should never become a stable fact
PASSING: list[tuple[str, str, list[str]]] = [
    ("lunch", "I had a {x} for lunch, it was fine, nothing special.", ["tuna sandwich", "leftover curry", "bowl of instant noodles", "salad from the corner shop"]),
    ("tv_tonight", "I'm watching {x} tonight, probably falling asleep halfway.", ["a documentary about deep-sea fish", "some random cooking show", "an old Bond film"]),
    ("wearing", "I'm wearing {x} today, it's freezing in the office.", ["my ugliest wool jumper", "two pairs of socks", "my dad's old fleece"]),
    ("market", "Picked up {x} at the market, no idea what I'll do with them.", ["a bag of quinces", "some purple carrots", "a huge bunch of dill"]),
    ("song", "I've had {x} stuck in my head all day.", ["an advert jingle", "a song from the eighties", "the hold music from the bank"]),
    ("errand", "Spent my lunch break {x}, riveting stuff.", ["queuing at the post office", "returning a pair of shoes", "looking for a birthday card"]),
]  # fmt: skip

# topics no one in any conversation ever talks about (unanswerable questions)
NEVER_SAID = [
    ("What is {me}'s favourite opera?", "opera"),
    ("What is {me}'s blood type?", "blood_type"),
    ("What breed of horse does {me} ride?", "horse"),
    ("What tattoo does {me} have?", "tattoo"),
    ("What is {me}'s golf handicap?", "golf"),
    ("Which political party does {me} vote for?", "politics"),
    ("What is the name of {me}'s yacht?", "yacht"),
    ("What did {me} study for a PhD?", "phd"),
]  # fmt: skip
