"""Name pools for the synthetic MFDS registry.

Everything here is invented from general knowledge of drug names, Korean company naming and
manufacturing geography, so that the simulator has the texture of the real list (salt and
hydrate forms, `(주)` forms, Indian `Private Limited`, Chinese `Co., Ltd`, Korean site
addresses) without copying a single real record. The builders take an explicit
`random.Random` so that the registry stays a pure function of its seed.
"""

from __future__ import annotations

import random

# Country names as MFDS writes them, weighted by how often they occur as a manufacturing
# country (India and China dominate, as in the real list).
COUNTRY_WEIGHTS: dict[str, float] = {
    "인도": 36.0,
    "중국": 35.0,
    "대한민국": 9.0,
    "이탈리아": 3.0,
    "스페인": 2.2,
    "스위스": 1.4,
    "독일": 1.2,
    "일본": 1.1,
    "미국": 0.9,
    "싱가포르": 0.8,
    "아일랜드": 0.7,
    "영국": 0.7,
    "폴란드": 0.6,
    "대만": 0.6,
    "프랑스": 0.5,
    "체코공화국": 0.5,
    "말레이지아": 0.45,
    "헝가리": 0.35,
    "이스라엘": 0.35,
    "포르투갈": 0.2,
    "푸에르토리코": 0.2,
    "멕시코": 0.2,
    "캐나다": 0.15,
    "네덜란드": 0.15,
    "벨기에": 0.15,
    "오스트리아": 0.12,
    "크로아티아": 0.1,
    "슬로베니아": 0.1,
    "스웨덴": 0.1,
    "덴마크": 0.08,
    "몰타": 0.08,
    "우크라이나": 0.06,
    "브라질": 0.06,
    "아르헨티나": 0.05,
}

# "base:form|form|…" — `-` is the bare base. Forms are written as MFDS writes them, glued to
# the base (아토르바스타틴칼슘삼수화물) or in brackets ((미분화)).
_INGREDIENT_SPEC = """
암로디핀:베실산염|말레산염|캄실산염|니코틴산염
아토르바스타틴:칼슘|칼슘삼수화물|칼슘(미분화)
로수바스타틴:칼슘|칼슘(미분화)
피타바스타틴:칼슘|칼슘수화물
심바스타틴:-
세티리진:염산염
레보세티리진:염산염
클로피도그렐:황산수소염|베실산염|황산염|나파디실산염
메트포르민:염산염
글리메피리드:-|(미분화)
시타글립틴:인산염수화물|염산염수화물|말레산염
리나글립틴:-
빌다글립틴:-
에보글립틴:타르타르산염
제미글립틴:타르타르산염|타르타르산염세스퀴수화물
삭사글립틴:일수화물
테네리글립틴:브롬화수소산염수화물
다파글리플로진:프로판디올수화물|-
엠파글리플로진:-
로베글리타존:황산염
피오글리타존:염산염
미티글리니드:칼슘수화물
에제티미브:-
페노피브레이트:-|(미분화)
텔미사르탄:-
발사르탄:-
로사르탄:칼륨
올메사르탄메독소밀:-
칸데사르탄실렉세틸:-
이르베사르탄:-
아세트아미노펜:-
이부프로펜:-
덱시부프로펜:-
나프록센:-|나트륨
셀레콕시브:-
멜록시캄:-
아세클로페낙:-
록소프로펜:나트륨|나트륨수화물
트라마돌:염산염
가바펜틴:-
프레가발린:-
레베티라세탐:-
라모트리진:-
토피라메이트:-
라코사미드:-
브리바라세탐:-
옥스카르바제핀:-
에스시탈로프람:옥살산염
세르트랄린:염산염
파록세틴:염산염|염산염수화물
둘록세틴:염산염
보르티옥세틴:브롬화수소산염
쿠에티아핀:푸마르산염
올란자핀:-
아리피프라졸:-
팔리페리돈:-
도네페질:염산염|염산염수화물
메만틴:염산염
에스오메프라졸:마그네슘이수화물|마그네슘삼수화물|스트론튬사수화물
란소프라졸:-
판토프라졸:나트륨|나트륨세스퀴수화물
라베프라졸:나트륨
파모티딘:-
레바미피드:-
모사프리드:시트르산염|시트르산염이수화물
이토프리드:염산염
돔페리돈:-|말레산염
트리메부틴:말레산염
몬테루카스트:나트륨
레보플록사신:수화물|반수화물
시프로플록사신:염산염|염산염수화물
오플록사신:-
목시플록사신:염산염
아지트로마이신:-|수화물|이수화물
클래리트로마이신:-
세파클러:수화물
세픽심:수화물
세프디니르:-
세포탁심:나트륨
세프트리악손:나트륨|나트륨수화물
세포페라존:나트륨
세프미녹스:나트륨
세프메타졸:나트륨
세팔렉신:수화물
세프카펜피복실:염산염수화물
아목시실린:수화물|삼수화물
클라불란산:칼륨
반코마이신:염산염
테이코플라닌:-
메로페넴:수화물|삼수화물
에르타페넴:나트륨
피페라실린:나트륨
타조박탐:나트륨
설박탐:나트륨
플루코나졸:-
이트라코나졸:-
테르비나핀:염산염
발라시클로비르:염산염|염산염수화물
엔테카비르:수화물|일수화물
테노포비르디소프록실:푸마르산염
오셀타미비르:인산염
랄테그라비르:칼륨
돌루테그라비르:나트륨
실로스타졸:-
사포그릴레이트:염산염
리바록사반:-|(미분화)
아픽사반:-
에독사반:토실산염수화물|토실산염수화물(미분화)
다비가트란에텍실레이트:메실산염
티카그렐러:-
베라프로스트:나트륨
카르베딜롤:-
비소프롤롤:푸마르산염
네비볼롤:염산염
레르카니디핀:염산염
실니디핀:-
인다파미드:-
토르세미드:-
스피로노락톤:-
탐스로신:염산염
실로도신:-
두타스테리드:-
타다라필:-
실데나필:시트르산염
미라베그론:-
솔리페나신:숙신산염
톨테로딘:타르타르산염
레보티록신:나트륨|나트륨수화물
알렌드론산:나트륨|나트륨삼수화물
리세드론산:나트륨|나트륨수화물
이반드론산:나트륨일수화물
졸레드론산:일수화물
라록시펜:염산염
바제독시펜:아세트산염
타목시펜:시트르산염
레트로졸:-
아나스트로졸:-
비칼루타미드:-
이마티닙:메실산염
게피티닙:-
엘로티닙:염산염
다사티닙:-|일수화물
카페시타빈:-
젬시타빈:염산염
이리노테칸:염산염|염산염수화물
옥살리플라틴:-
도세탁셀:-|삼수화물
파클리탁셀:-
페메트렉시드:나트륨|이나트륨수화물
보르테조밉:-
레날리도마이드:-|수화물
타크로리무스:수화물
사이클로스포린:-
미코페놀레이트모페틸:-
헤파린:나트륨|칼슘
에녹사파린:나트륨
글루코사민:염산염|황산염
우르소데옥시콜산:-
아세틸시스테인:-
암브록솔:염산염
에르도스테인:-
펙소페나딘:염산염
베포타스틴:베실산염|살리실산염
에피나스틴:염산염
졸피뎀:타르타르산염
메틸페니데이트:염산염
아토목세틴:염산염
나라트립탄:염산염
리자트립탄:벤조산염
콜린알포세레이트:-
알로푸리놀:-
페북소스타트:-
레보설피리드:-
에카베트:나트륨|나트륨수화물
세벨라머:탄산염|염산염
리도카인:염산염|염산염수화물
로피바카인:염산염수화물
온단세트론:염산염수화물
팔로노세트론:염산염
프라미펙솔:염산염수화물
로피니롤:염산염
라사길린:메실산염
엔타카폰:-
오피카폰:-
하이드록시클로로퀸:황산염
메살라진:-
부데소니드:-
포르모테롤:푸마르산염이수화물
티오트로피움:브롬화물일수화물
독시사이클린:수화물|염산염
클린다마이신:염산염|인산에스테르
아미트리프틸린:염산염
히드록소코발라민:아세트산염|염산염
리피테그라스트:-
라세카도트릴:-
피네레논:-|(미분화)
퀴자티닙:염산염
렘보렉산트:-
아토제판트:일수화물
엔잘루타미드:-
아비라테론아세테이트:-
룩소리티닙:인산염
소라페닙:토실산염
수니티닙:말산염
L-아르기닌:염산염|-
L-카르니틴:타르타르산염
"""

# Bases that also exist as a single isomer, written with an `S-`/`에스` style prefix.
ISOMER_PREFIXES: dict[str, str] = {
    "암로디핀": "S-",
    "오메프라졸": "에스",
    "케토프로펜": "덱스",
    "이부프로펜": "덱스",
    "세티리진": "레보",
    "판토프라졸": "S-",
    "란소프라졸": "덱스",
}

# Old records write the salt before the base (메실산독사조신); a few generate that way.
OLD_STYLE_SALTS: tuple[str, ...] = ("염산", "메실산", "말레산", "황산", "베실산", "푸마르산")
OLD_STYLE_BASES: tuple[str, ...] = (
    "독사조신",
    "테라조신",
    "티클로피딘",
    "펜톡시필린",
    "디클로페낙",
    "라니티딘",
    "시메티딘",
    "에페리손",
    "티아프리드",
    "플루나리진",
    "니카르디핀",
    "베타히스틴",
)

COMBINATIONS: tuple[str, ...] = (
    "사쿠비트릴·발사르탄나트륨염수화물",
    "아목시실린·클라불란산칼륨",
    "피페라실린나트륨·타조박탐나트륨",
    "세포페라존나트륨·설박탐나트륨",
    "이미페넴·실라스타틴나트륨",
)

HERBALS: tuple[str, ...] = (
    "은행엽 건조엑스",
    "은행엽 건조엑스(50→1)",
    "감초 건조엑스",
    "작약·감초 건조엑스",
    "홍삼 농축액",
    "에키네시아 건조엑스",
    "밀크시슬 건조엑스",
    "아이비엽 건조엑스",
    "빌베리 건조엑스",
    "애엽 95%에탄올 연조엑스(20→1)",
    "쏘팔메토 열매 연조엑스",
    "당귀·천궁·작약 30%에탄올 건조엑스(5→1)",
    "황련·황금·치자 건조엑스",
    "오가피·우슬·방풍 25%에탄올 연조엑스(4→1)",
    "포도씨 건조엑스",
)


def ingredient_catalogue() -> list[str]:
    """Every ingredient name the generator may use, in a fixed order (seed-independent)."""
    names: list[str] = []
    for line in _INGREDIENT_SPEC.strip().splitlines():
        base, forms = line.split(":")
        for form in forms.split("|"):
            names.append(base if form == "-" else base + form)
            if form != "-" and not form.endswith(")") and len(names) % 5 == 0:
                names.append(f"{base}{form}(미분화)")
        if base in ISOMER_PREFIXES:
            first = forms.split("|")[0]
            names.append(ISOMER_PREFIXES[base] + base + ("" if first == "-" else first))
    names.extend(salt + base for base in OLD_STYLE_BASES for salt in OLD_STYLE_SALTS[:2])
    names.extend(COMBINATIONS)
    return list(dict.fromkeys(names))


# Korean applicant companies.
_KO_SYLLABLES = (
    "한",
    "대",
    "동",
    "신",
    "삼",
    "성",
    "우",
    "진",
    "경",
    "보",
    "일",
    "영",
    "국",
    "화",
    "명",
    "인",
    "태",
    "세",
    "종",
    "정",
    "유",
    "광",
    "용",
    "금",
    "미",
    "서",
    "안",
    "효",
    "휴",
    "현",
    "제",
    "중",
    "부",
    "남",
    "청",
    "원",
    "하",
    "도",
    "수",
    "선",
    "상",
    "아",
    "오",
    "이",
    "지",
    "덕",
    "녹",
    "풍",
    "산",
    "천",
    "백",
    "초",
    "구",
    "양",
    "림",
    "빛",
    "솔",
    "은",
    "석",
    "혜",
)
_KO_LETTERS = (
    "케이",
    "에이",
    "비",
    "씨",
    "디",
    "이",
    "에프",
    "지",
    "에이치",
    "아이",
    "제이",
    "엘",
    "엠",
    "엔",
    "오",
    "피",
    "큐",
    "알",
    "에스",
    "티",
    "유",
    "더블유",
    "엑스",
    "와이",
)
_KO_WORDS = (
    "파마",
    "메디",
    "바이오",
    "케어",
    "팜",
    "켐",
    "젠",
    "텍",
    "라이프",
    "솔루션",
    "글로벌",
    "코리아",
    "사이언스",
    "네트",
    "웰",
    "큐어",
    "랩",
    "노바",
    "비전",
    "헬스",
)
_KO_TYPES = (
    ("제약", 40),
    ("약품", 14),
    ("팜", 9),
    ("바이오", 7),
    ("파마", 7),
    ("켐", 5),
    ("생명과학", 4),
    ("화학", 3),
    ("헬스케어", 3),
    ("약품상사", 2),
    ("트레이딩", 2),
    ("메디칼", 1),
    ("산업", 1),
    ("정밀화학", 1),
    ("무역", 1),
)
_FOREIGN_STEMS = (
    "노바젠",
    "메디로",
    "파마티스",
    "헬리온",
    "말린크",
    "프레제니",
    "베르텍",
    "아우렌",
    "키네스",
    "솔비아",
    "렉사젠",
    "마리온",
    "엘렌사",
    "티에라",
    "브리젠",
    "오르비스",
    "카렌토",
    "델피아",
)


def make_company_name(rng: random.Random) -> str:
    """A plausible Korean applicant name in one of the legal forms MFDS lists."""
    roll = rng.random()
    if roll < 0.06:
        stem = rng.choice(_FOREIGN_STEMS)
        return rng.choice((f"한국{stem}(주)", f"{stem}코리아(주)", f"한국{stem}제약(주)"))
    if roll < 0.28:
        stem = "".join(rng.choice(_KO_LETTERS) for _ in range(rng.choice((2, 2, 3))))
    elif roll < 0.42:
        stem = rng.choice(_KO_SYLLABLES) + rng.choice(_KO_WORDS)
    else:
        stem = "".join(rng.choice(_KO_SYLLABLES) for _ in range(rng.choice((2, 2, 2, 3))))
    kind = rng.choices([t for t, _ in _KO_TYPES], [w for _, w in _KO_TYPES])[0]
    body = stem + kind
    form = rng.random()
    if form < 0.36:
        return f"(주){body}"
    if form < 0.78:
        return f"{body}(주)"
    if form < 0.90:
        return f"주식회사{body}"
    if form < 0.97:
        return f"{body}주식회사"
    return f"주식회사 {body}"


def bizrno_check_digit(first9: str) -> str:
    """Korean business registration check digit, so generated numbers pass real validators."""
    weights = (1, 3, 7, 1, 3, 7, 1, 3, 5)
    total = sum(int(d) * w for d, w in zip(first9, weights))
    total += (int(first9[8]) * 5) // 10
    return str((10 - total % 10) % 10)


def make_bizrno(rng: random.Random) -> str:
    """A 10-digit corporate BIZRNO (office code, corporate type 81/85/86/87/88, serial, check)."""
    office = rng.randint(101, 899)
    kind = rng.choice(("81", "81", "81", "86", "86", "85", "87", "88"))
    first9 = f"{office:03d}{kind}{rng.randint(0, 9999):04d}"
    return first9 + bizrno_check_digit(first9)


def korean_manufacturer_variant(rng: random.Random, applicant: str) -> str:
    """How a Korean applicant that makes its own API writes itself as manufacturer."""
    body = applicant.replace("(주)", "").replace("주식회사", "").strip()
    return rng.choice((applicant, applicant, f"{body}주식회사", f"(주){body}", f"{body}㈜"))


KOREAN_SITES: tuple[str, ...] = (
    "경기도 화성시 향남읍",
    "경기도 안산시 단원구",
    "경기도 평택시",
    "경기도 용인시 처인구",
    "경기도 시흥시",
    "경기도 김포시",
    "경기도 이천시",
    "경기도 안성시",
    "충청북도 청주시 흥덕구",
    "충청북도 음성군",
    "충청북도 진천군",
    "충청북도 청주시 흥덕구 오송읍",
    "충청남도 아산시",
    "충청남도 천안시 동남구",
    "충청남도 당진시",
    "인천광역시 남동구",
    "인천광역시 연수구",
    "전라북도 완주군",
    "경상북도 칠곡군",
    "강원도 원주시",
    "세종특별자치시",
    "대전광역시 대덕구",
    "전라남도 화순군",
    "경상남도 양산시",
)
KOREAN_STREETS: tuple[str, ...] = ("제약단지로", "산단로", "생명로", "과학단지로", "공단로", "테크노로")

# Foreign manufacturers: name stems and legal forms by country, plus address pieces.
_CN_CITIES: tuple[tuple[str, str], ...] = (
    ("Taizhou", "Zhejiang"),
    ("Shaoxing", "Zhejiang"),
    ("Jiaxing", "Zhejiang"),
    ("Hangzhou", "Zhejiang"),
    ("Lianyungang", "Jiangsu"),
    ("Changzhou", "Jiangsu"),
    ("Nanjing", "Jiangsu"),
    ("Suzhou", "Jiangsu"),
    ("Yantai", "Shandong"),
    ("Zibo", "Shandong"),
    ("Jinan", "Shandong"),
    ("Wuhan", "Hubei"),
    ("Shijiazhuang", "Hebei"),
    ("Handan", "Hebei"),
    ("Chengdu", "Sichuan"),
    ("Leshan", "Sichuan"),
    ("Harbin", "Heilongjiang"),
    ("Xiamen", "Fujian"),
    ("Hefei", "Anhui"),
    ("Zhengzhou", "Henan"),
)
_CN_PLACES = (
    tuple(sorted({p for _, p in _CN_CITIES})) + tuple(c for c, _ in _CN_CITIES) + ("Shanghai", "Beijing", "Chongqing")
)
_CN_STEMS = (
    "Xinhe",
    "Jingrui",
    "Kangtai",
    "Guoyuan",
    "Dongrui",
    "Hexin",
    "Longhua",
    "Baorun",
    "Chenyang",
    "Tianyu",
    "Huayang",
    "Jiuzhou",
    "Haizheng",
    "Yongning",
    "Ruibang",
    "Minsheng",
    "Tongli",
    "Xianju",
    "Aoxiang",
    "Shengda",
    "Jinhui",
    "Kanghong",
    "Tianma",
    "Yuxin",
    "Runhe",
    "Zhongbang",
    "Fuxing",
    "Hongyuan",
    "Boya",
    "Shuangcheng",
    "Xinyi",
    "Hanhui",
    "Lianhe",
    "Anlong",
    "Jiahe",
    "Huadong",
    "Qianjin",
    "Hengda",
    "Meiya",
    "Lizhu",
    "Kaiyuan",
    "Wanbang",
    "Sanxin",
    "Yongtai",
    "Shenghua",
)
_CN_KINDS = (
    "Pharmaceutical",
    "Pharmaceutical",
    "Pharmaceuticals",
    "Chemical",
    "Biochemical",
    "Bio-Pharmaceutical",
    "Pharmaceutical Chemical",
    "Biotechnology",
    "Pharma",
)
_CN_FORMS = ("Co., Ltd.", "Co., Ltd.", "Co., Ltd", "Co.,Ltd", "Co.,Ltd.", "co., ltd", "CO., LTD.")
_CN_ZONES = (
    "Economic Development Zone",
    "Chemical Industrial Zone",
    "Hi-tech Industrial Development Zone",
    "Coastal Industrial City",
    "Pharmaceutical Industrial Park",
    "Fine Chemical Industrial Park",
)
_CN_ROADS = ("Jinqiao", "Xinhai", "Fenghuang", "Qinglong", "Tianfu", "Huaxia", "Jiangbin", "Donghai")

_IN_STEMS = (
    "Ananta",
    "Bhavya",
    "Chandra",
    "Divya",
    "Ekta",
    "Gayatri",
    "Indus",
    "Jayant",
    "Kalpa",
    "Lakshmi",
    "Mahima",
    "Navya",
    "Omkar",
    "Prakash",
    "Rasayan",
    "Sainath",
    "Tejas",
    "Udaya",
    "Vedant",
    "Yashika",
    "Sri Venkata",
    "Vijaya",
    "Avani",
    "Kirti",
    "Nirmal",
    "Param",
    "Rudra",
    "Samarth",
    "Triveni",
    "Varun",
    "Hrishi",
    "Mangal",
    "Devika",
    "Pushpa",
    "Shakti",
    "Arogya",
    "Ojas",
    "Sanjivani",
)
_IN_KINDS = (
    "Laboratories",
    "Pharma",
    "Lifesciences",
    "Life Sciences",
    "Drugs",
    "Organics",
    "Chemicals",
    "Pharmaceuticals",
    "Remedies",
    "Healthcare",
    "Active Pharma Sciences",
    "Labs",
    "Synthesis",
)
_IN_FORMS = ("Limited", "Limited", "Private Limited", "Pvt. Ltd.", "Pvt. Ltd", "Ltd", "Ltd.", "LIMITED")
_IN_AREAS = (
    ("IDA Jeedimetla", "Hyderabad", "500 055", "Telangana"),
    ("IDA Bollaram", "Sangareddy District", "502 325", "Telangana"),
    ("IDA Pashamylaram", "Sangareddy District", "502 307", "Telangana"),
    ("J.N. Pharma City, Parawada", "Visakhapatnam", "531 021", "Andhra Pradesh"),
    ("MIDC Tarapur, Boisar", "Palghar", "401 506", "Maharashtra"),
    ("MIDC Kurkumbh", "Pune", "413 802", "Maharashtra"),
    ("GIDC Industrial Estate, Ankleshwar", "Bharuch", "393 002", "Gujarat"),
    ("SEZ Phase-II, Dahej", "Bharuch", "392 130", "Gujarat"),
    ("Karakhadi, Tal-Padra", "Vadodara", "391 450", "Gujarat"),
    ("Bommasandra Industrial Area", "Bengaluru", "560 099", "Karnataka"),
    ("Deosugur Industrial Area", "Raichur", "584 170", "Karnataka"),
    ("SIPCOT Industrial Complex", "Cuddalore", "607 005", "Tamil Nadu"),
    ("Baddi Industrial Area", "Solan", "173 205", "Himachal Pradesh"),
)

_EU: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    # country: (stems, legal forms, towns)
    "이탈리아": (
        (
            "Farmachimica Lombarda",
            "Chimica Veneta",
            "Sintetica Emiliana",
            "Industria Chimica Adriatica",
            "Farmaceutici Toscani",
            "Biochimica Ligure",
            "Laboratorio Chimico Piemontese",
            "Fine Chemicals Italia",
        ),
        ("S.p.A.", "S.p.A", "S.r.l.", "S.R.L"),
        ("Milano (MI), Italy", "Novara (NO), Italy", "Bergamo (BG), Italy", "Latina (LT), Italy"),
    ),
    "스페인": (
        ("Quimica Sintetica Iberica", "Laboratorios Levante", "Farmaquimica del Sur", "Industrias Quimicas Catalanas"),
        ("S.A.", "S.L.", "S.A.U."),
        ("Barcelona, Spain", "Madrid, Spain", "Valencia, Spain", "Zaragoza, Spain"),
    ),
    "독일": (
        ("Rheinchemie Pharma", "Bayerische Wirkstoffe", "Nordsynthese", "Elbe Pharmachemie"),
        ("GmbH", "GmbH & Co. KG", "AG"),
        ("Frankfurt am Main, Germany", "Feucht, Germany", "Hamburg, Germany", "Leverkusen, Germany"),
    ),
    "스위스": (
        ("Alpensynthese", "Helvetic Fine Chemicals", "Rhone Valley Pharma", "Jura Chemie"),
        ("AG", "SA", "Ltd"),
        ("Visp, Switzerland", "Basel, Switzerland", "Monthey, Switzerland"),
    ),
    "프랑스": (
        ("Chimie Fine de Normandie", "Synthese Rhone-Alpes", "Laboratoires Atlantique"),
        ("SAS", "S.A.S.", "S.A."),
        ("Lyon, France", "Rouen, France", "Toulouse, France"),
    ),
    "일본": (
        ("Kansai Fine Chemical", "Tokai Yakuhin Kogyo", "Hokuriku Seiyaku", "Setouchi Chemical"),
        ("Co., Ltd.", "Corporation", "Co., Ltd"),
        ("Osaka, Japan", "Toyama, Japan", "Shizuoka, Japan"),
    ),
    "미국": (
        ("Great Lakes Pharma", "Piedmont Fine Chemicals", "Pacific Synthesis"),
        ("Inc.", "LLC", "Inc"),
        ("New Jersey, USA", "North Carolina, USA", "Michigan, USA"),
    ),
    "싱가포르": (("Tuas Pharma", "Jurong Synthesis"), ("Pte. Ltd.", "Pte Ltd"), ("Singapore",)),
    "아일랜드": (
        ("Cork Pharma Chemicals", "Shannon Synthesis"),
        ("Limited", "Unlimited Company"),
        ("Cork, Ireland", "Ringaskiddy, Co. Cork, Ireland"),
    ),
    "영국": (("Pennine Fine Chemicals", "Thames Pharma"), ("Limited", "Ltd"), ("Cumbria, United Kingdom",)),
    "폴란드": (("Polfarma Synteza", "Wisla Chemicals"), ("S.A.", "Sp. z o.o."), ("Warszawa, Poland",)),
    "대만": (("Formosa Fine Pharma", "Hsinchu Synthesis"), ("Co., Ltd.", "Corporation"), ("Hsinchu, Taiwan",)),
    "체코공화국": (("Morava Pharma", "Bohemia Chemicals"), ("s.r.o.", "a.s."), ("Opava, Czech Republic",)),
    "말레이지아": (("Selangor Pharma", "Penang Synthesis"), ("Sdn. Bhd.", "Sdn Bhd"), ("Selangor, Malaysia",)),
    "헝가리": (("Duna Pharma", "Tisza Chemicals"), ("Zrt.", "Kft."), ("Debrecen, Hungary",)),
    "이스라엘": (("Negev Fine Chemicals", "Carmel Pharma"), ("Ltd.", "Ltd"), ("Haifa, Israel",)),
    "포르투갈": (("Lusosintese", "Tejo Pharma"), ("S.A.",), ("Loures, Portugal",)),
    "푸에르토리코": (("Caribe Pharmaceuticals",), ("LLC",), ("Barceloneta, Puerto Rico 00617",)),
    "멕시코": (("Quimica Azteca",), ("S.A. de C.V.",), ("Cuernavaca, Mexico",)),
    "캐나다": (("Laurentian Pharma",), ("Inc.",), ("Ontario, Canada",)),
    "네덜란드": (("Maas Pharma Chemicals",), ("B.V.",), ("Nijmegen, The Netherlands",)),
    "벨기에": (("Schelde Synthesis",), ("NV", "SA"), ("Geel, Belgium",)),
    "오스트리아": (("Tirol Pharma",), ("GmbH",), ("Kundl, Austria",)),
    "크로아티아": (("Adria Pharma",), ("d.d.",), ("Zagreb, Croatia",)),
    "슬로베니아": (("Sava Chemicals",), ("d.d.",), ("Ljubljana, Slovenia",)),
    "스웨덴": (("Nordic API",), ("AB",), ("Sodertalje, Sweden",)),
    "덴마크": (("Jutland Pharma",), ("A/S",), ("Copenhagen, Denmark",)),
    "몰타": (("Hal Far Pharma",), ("Ltd",), ("Hal Far, Malta",)),
    "우크라이나": (("Dnipro Pharma",), ("PJSC",), ("Kyiv, Ukraine",)),
    "브라질": (("Paulista Farmoquimica",), ("Ltda.",), ("Sao Paulo, Brazil",)),
    "아르헨티나": (("Pampa Quimica",), ("S.A.",), ("Buenos Aires, Argentina",)),
}
_STREETS = (
    "Via Industriale",
    "Via della Chimica",
    "Industriestrasse",
    "Avenue de l'Industrie",
    "Industrial Park Road",
    "Poligono Industrial",
    "Chemiepark",
)

MANUFACTURER_NOTES: tuple[str, ...] = ("(미분화 공정) ", "[조품제조원] ", "[미분화공정 제조원] ")


def make_foreign_manufacturer(rng: random.Random, country: str) -> str:
    """A plausible manufacturer name for a non-Korean country."""
    if country == "중국":
        return f"{rng.choice(_CN_PLACES)} {rng.choice(_CN_STEMS)} {rng.choice(_CN_KINDS)} {rng.choice(_CN_FORMS)}"
    if country == "인도":
        return f"{rng.choice(_IN_STEMS)} {rng.choice(_IN_KINDS)} {rng.choice(_IN_FORMS)}"
    stems, forms, _ = _EU[country]
    return f"{rng.choice(stems)} {rng.choice(forms)}"


def make_site(rng: random.Random, country: str) -> str:
    """A site address in the free-text style of MNFCTR_PLACE for the given country."""
    if country == "대한민국":
        site = rng.choice(KOREAN_SITES)
        if rng.random() < 0.15:
            site = f"{site} {rng.choice(KOREAN_STREETS)} {rng.randint(10, 600)}"
        return site
    if country == "중국":
        city, prov = rng.choice(_CN_CITIES)
        return (
            f"No. {rng.randint(1, 399)}, {rng.choice(_CN_ROADS)} Road, {rng.choice(_CN_ZONES)}, "
            f"{city}, {prov} Province, {rng.choice(('China', 'China', 'P.R. China', 'China.'))}"
        )
    if country == "인도":
        area, city, pin, state = rng.choice(_IN_AREAS)
        phase = rng.choice(("I", "II", "III", "Ⅲ", "Ⅱ"))
        head = rng.choice(
            (
                f"Plot No. {rng.randint(1, 400)}",
                f"Sy. No. {rng.randint(10, 300)}/{rng.choice('ABC')}",
                f"Plot No.{rng.randint(1, 99)}&{rng.randint(100, 120)}",
                f"Unit-{phase}, Plot No. {rng.randint(1, 90)}",
            )
        )
        return f"{head}, {area}, {city} - {pin}, {state}, {rng.choice(('India', 'India', 'INDIA', 'India.'))}"
    _, _, towns = _EU[country]
    return f"{rng.choice(_STREETS)} {rng.randint(1, 120)}, {rng.randint(1000, 99999)} {rng.choice(towns)}"
