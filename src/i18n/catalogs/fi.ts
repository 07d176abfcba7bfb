import type { Catalog } from '../catalog.ts'

/**
 * Finnish (suomi).
 * @public loaded by catalogs/index.ts with `require`, which knip does not follow
 */
export const fi: Catalog = {
  // The form page
  'page.title_error': 'Virhe: {title}',
  'page.submit': 'Lähetä vastaus',
  'page.asked_by': '{sender} pyytää vastaustasi',
  'page.answer_by': 'Vastaa viimeistään {deadline}',
  'page.closes_in': 'Vastausaikaa jäljellä: {duration}.',
  'page.footer':
    'Vastauksesi menee vain sille, joka lähetti sinulle tämän linkin. Tähän lomakkeeseen voi vastata vain kerran.',
  'page.new_tab': '(avautuu uuteen välilehteen)',
  'mark.required': '(pakollinen)',
  'mark.optional': '(vapaaehtoinen)',

  // Errors, as a 422 page shows them
  'summary.title': 'Lomakkeessa on korjattavaa',
  'error.prefix': 'Virhe:',
  'error.required.text': 'Kirjoita vastaus',
  'error.required.textarea': 'Kirjoita vastaus',
  'error.required.email': 'Anna sähköpostiosoite',
  'error.required.number': 'Anna luku',
  'error.required.date': 'Anna päivämäärä',
  'error.required.select': 'Valitse vaihtoehto',
  'error.required.select_multiple': 'Valitse vähintään yksi vaihtoehto',
  'error.required.file': 'Valitse tiedosto',
  'error.unchecked': 'Merkitse ruutu, jotta voit jatkaa',
  'error.too_short': { one: 'Kirjoita vähintään {count} merkki', other: 'Kirjoita vähintään {count} merkkiä' },
  'error.too_long': { one: 'Kirjoita enintään {count} merkki', other: 'Kirjoita enintään {count} merkkiä' },
  'error.too_long_by': {
    one: '{limit}. Vastauksessa on {count} merkki liikaa',
    other: '{limit}. Vastauksessa on {count} merkkiä liikaa',
  },
  'answered.title': 'Vastattu: {title}',
  'error.too_small': 'Anna luku, joka on vähintään {min}',
  'error.too_large': 'Anna luku, joka on enintään {max}',
  'error.step': 'Anna kelvollinen luku (askelväli {step})',
  'error.step_from': 'Anna kelvollinen luku (alkaen luvusta {min}, askelväli {step})',
  'error.invalid_format': 'Kirjoita vastaus oikeassa muodossa',
  'error.invalid_format.text': 'Kirjoita vastaus yhdelle riville',
  'error.invalid_format.number': 'Anna luku, esimerkiksi {example}',
  'error.pattern': 'Kirjoita vastaus pyydetyssä muodossa',
  'error.email': 'Anna sähköpostiosoite oikeassa muodossa, esimerkiksi name@example.com',
  'error.not_an_option': 'Valitse jokin vaihtoehdoista',
  'error.not_unique': 'Valitse kukin vaihtoehto vain kerran',
  'error.too_few_selected': {
    one: 'Valitse vähintään {count} vaihtoehto',
    other: 'Valitse vähintään {count} vaihtoehtoa',
  },
  'error.too_many_selected': {
    one: 'Valitse enintään {count} vaihtoehto',
    other: 'Valitse enintään {count} vaihtoehtoa',
  },
  'error.date': 'Anna kelvollinen päivämäärä',
  'error.date_too_early': 'Valitse {date} tai myöhempi päivämäärä',
  'error.date_too_late': 'Valitse {date} tai aiempi päivämäärä',
  'error.file_too_large': 'Valitun tiedoston koko saa olla enintään {size}',
  'error.file_type': 'Valitun tiedoston on oltava jotakin näistä tyypeistä: {types}',
  'error.control_character': 'Poista vastauksestasi näkymätön merkki {character}',
  'error.invalid_encoding': 'Vastaustasi ei voitu lukea, joten kirjoita se uudelleen',
  'error.invalid_value': 'Anna kelvollinen vastaus',

  // Hints under a label
  'hint.min_length': { one: 'Vähintään {count} merkki.', other: 'Vähintään {count} merkkiä.' },
  'hint.max_length': { one: 'Enintään {count} merkki.', other: 'Enintään {count} merkkiä.' },
  'hint.length_between': {
    one: 'Vähintään {min} ja enintään {count} merkki.',
    other: 'Vähintään {min} ja enintään {count} merkkiä.',
  },
  'hint.number_between': 'Luku väliltä {min}–{max}.',
  'hint.number_min': 'Luku, joka on vähintään {min}.',
  'hint.number_max': 'Luku, joka on enintään {max}.',
  'hint.date_between': 'Päivämäärä väliltä {min} – {max}.',
  'hint.date_min': '{min} tai myöhempi päivämäärä.',
  'hint.date_max': '{max} tai aiempi päivämäärä.',
  'hint.date_on': 'Vain päivämäärä {date}.',
  'date.day': 'Päivä',
  'date.month': 'Kuukausi',
  'date.year': 'Vuosi',
  'date.example': 'Esimerkiksi {example}',
  'date.missing_day': 'Päivämäärästä puuttuu päivä',
  'date.missing_month': 'Päivämäärästä puuttuu kuukausi',
  'date.missing_year': 'Päivämäärästä puuttuu vuosi',
  'date.missing_day_month': 'Päivämäärästä puuttuvat päivä ja kuukausi',
  'date.missing_day_year': 'Päivämäärästä puuttuvat päivä ja vuosi',
  'date.missing_month_year': 'Päivämäärästä puuttuvat kuukausi ja vuosi',
  'date.not_real': 'Anna päivämäärä, joka on olemassa',
  'date.year_digits': 'Vuodessa on oltava 4 numeroa',
  'date.on': 'Päivämäärän on oltava {date}',
  'hint.file_size': 'Enintään {size}.',
  'hint.file_types': 'Tiedostotyypit: {types}. Enintään {size}.',
  'hint.select_any': 'Valitse kaikki sopivat.',
  'hint.select_at_least': { one: 'Valitse vähintään yksi.', other: 'Valitse vähintään {count}.' },
  'hint.select_at_most': { one: 'Valitse enintään yksi.', other: 'Valitse enintään {count}.' },
  'hint.select_exactly': { one: 'Valitse yksi.', other: 'Valitse {count}.' },
  'hint.select_between': 'Valitse {min}–{max}.',

  // Controls
  'select.placeholder': 'Valitse vaihtoehto',
  'select.no_answer': 'Ei vastausta',
  'file.choose': 'Valitse tiedosto',
  'file.none': 'Tiedostoa ei ole valittu',
  'file.kept':
    'Olet jo lisännyt tiedoston {name} ({size}). Se lähetetään vastauksesi mukana, ellet poista sitä tai valitse alta toista tiedostoa.',
  'file.remove': 'Poista tämä tiedosto',
  'file.replace':
    'Sitä ei tarvitse valita uudelleen. Jos haluat lähettää toisen tiedoston tämän sijaan, valitse se tästä.',
  'file.kind.image': 'kuvat',
  'file.kind.audio': 'äänitiedostot',
  'file.kind.video': 'videot',
  'file.kind.text': 'tekstitiedostot',

  // After sending
  'receipt.title': 'Vastaus lähetetty: {title}',
  'receipt.heading': 'Vastauksesi on lähetetty',
  'receipt.default_message': 'Kiitos. Sinun ei tarvitse tehdä muuta, ja voit sulkea tämän sivun.',
  'receipt.sent_at': 'Lähetetty {time}.',
  'receipt.what_you_sent': 'Lähettämäsi tiedot',
  'receipt.not_answered': 'Ei vastausta',
  'receipt.yes': 'Kyllä',
  'receipt.no': 'Ei',
  'receipt.file': '{name} ({size})',
  'answered.heading': 'Tähän lomakkeeseen on vastattu',
  'answered.at': 'Vastaus lähetettiin {time}.',
  'answered.default_message': 'Sinun ei tarvitse tehdä muuta, ja voit sulkea tämän sivun.',

  // Pages for every other outcome
  'status.answered.heading': 'Tähän lomakkeeseen on jo vastattu',
  'status.answered.message':
    'Lomakkeeseen voi vastata vain kerran, ja tähän on jo vastattu. Juuri lähettämääsi vastausta ei tallennettu.',
  'status.cancelled.heading': 'Tämä lomake on peruttu',
  'status.cancelled.message': 'Lomakkeen lähettäjä ei enää tarvitse vastausta, joten lomakkeeseen ei voi vastata.',
  'status.expired.heading': 'Tämä lomake on vanhentunut',
  'status.expired.message':
    'Vastausaika on päättynyt, joten lomakkeeseen ei voi enää vastata. Jos haluat silti vastata, pyydä lomakkeen lähettäjältä uusi linkki.',
  'status.not_found.heading': 'Lomaketta ei löytynyt',
  'status.not_found.message':
    'Tässä osoitteessa ei ole lomaketta. Tarkista, että linkki on kokonainen. Lomake on myös voitu poistaa.',
  'status.cross_site.heading': 'Vastausta ei hyväksytty',
  'status.cross_site.message':
    'Tämä vastaus lähetettiin toiselta verkkosivustolta, joten sitä ei hyväksytty. Avaa saamasi linkki ja vastaa siellä.',
  'status.rate_limited.heading': 'Liian monta yritystä',
  'status.rate_limited.message':
    'Osoitteestasi tuli viimeisen minuutin aikana liian monta vastausta. Odota hetki ja yritä sitten uudelleen.',
  'status.too_large.heading': 'Liian suuri lähetettäväksi',
  'status.too_large.message':
    'Lähettämäsi tiedot ovat liian suuria tälle lomakkeelle. Valitse pienempiä tiedostoja ja yritä uudelleen.',
  'status.too_large.limits': 'Suurin tiedosto, jonka kukin kysymys ottaa vastaan:',
  'status.too_large.file_limit': '{label}: enintään {size}',
  'status.too_slow.heading': 'Lähettäminen kesti liian kauan',
  'status.too_slow.message':
    'Vastauksesi saapui liian hitaasti, eikä sitä tallennettu. Syynä voi olla heikko yhteys. Palaa lomakkeeseen ja lähetä vastaus uudelleen.',
  'status.busy.heading': 'Palvelu on ruuhkautunut',
  'status.busy.message':
    'Palvelin on juuri nyt liian kuormittunut eikä voinut ottaa vastaustasi vastaan, joten mitään ei tallennettu. Palaa lomakkeeseen ja lähetä vastaus uudelleen hetken kuluttua.',
  'status.unreadable.heading': 'Vastausta ei voitu lukea',
  'status.unreadable.message':
    'Saapuneita tietoja ei voitu lukea vastaukseksi tähän lomakkeeseen. Palaa lomakkeeseen ja lähetä vastaus sieltä.',
  'status.error.heading': 'Jokin meni vikaan',
  'status.error.message': 'Vastaustasi ei ehkä tallennettu. Yritä hetken kuluttua uudelleen.',
  'status.retry_after': {
    one: 'Voit yrittää uudelleen sekunnin kuluttua.',
    other: 'Voit yrittää uudelleen {count} sekunnin kuluttua.',
  },
  'status.back': 'Takaisin lomakkeeseen',
  'sent.heading': 'Lähettämäsi tiedot',
  'sent.not_recorded': 'Mitään lähettämääsi ei tallennettu.',
  'sent.intro': 'Alla on se, mitä lähetit, jotta voit ottaa siitä kopion.',
  'sent.copy_label': 'Vastauksesi tekstinä',
  'sent.copy_hint': 'Valitse kaikki tämän kentän teksti ja kopioi se.',
  'review.title': 'Tarkista vastauksesi – {title}',
  'review.heading': 'Tarkista vastauksesi ennen lähettämistä',
  'review.change': 'Muuta',
  'review.continue': 'Jatka',
  'review.send_heading': 'Lähetä vastauksesi',
  'review.send_text': 'Kun olet lähettänyt vastauksen, et voi enää muuttaa sitä.',
  'review.lapsed':
    'Vastauksiasi ei lähetetty. Tarkistusta odottavia vastauksia säilytetään 1 tunnin, ja se aika on kulunut. Täytä lomake uudelleen.',
  'review.lapsed_kept':
    'Vastauksiasi ei lähetetty. Tarkistusta odottavia vastauksia säilytetään 1 tunnin, ja se aika on kulunut. Vastauksesi on täytetty alle: lisää mahdolliset tiedostot uudelleen ja jatka.',
}
