import type { Catalog } from '../catalog.ts'

/**
 * Romanian (română).
 * @public loaded by catalogs/index.ts with `require`, which knip does not follow
 */
export const ro: Catalog = {
  // The form page
  'page.title_error': 'Eroare: {title}',
  'page.submit': 'Trimiteți răspunsul',
  'page.asked_by': 'Solicitare de la {sender}',
  'page.answer_by': 'Vă rugăm să răspundeți până la {deadline}',
  'page.closes_in': 'Timp rămas pentru răspuns: {duration}.',
  'page.footer':
    'Răspunsul dumneavoastră ajunge doar la persoana care v-a trimis acest link. Acest formular acceptă un singur răspuns.',
  'page.new_tab': '(se deschide într-o filă nouă)',
  'mark.required': '(obligatoriu)',
  'mark.optional': '(opțional)',

  // Errors, as a 422 page shows them
  'summary.title': 'Există o problemă',
  'error.prefix': 'Eroare:',
  'error.required.text': 'Scrieți un răspuns',
  'error.required.textarea': 'Scrieți un răspuns',
  'error.required.email': 'Introduceți o adresă de e-mail',
  'error.required.number': 'Introduceți un număr',
  'error.required.date': 'Introduceți o dată',
  'error.required.select': 'Selectați o opțiune',
  'error.required.select_multiple': 'Selectați cel puțin o opțiune',
  'error.required.file': 'Alegeți un fișier',
  'error.unchecked': 'Bifați căsuța pentru a continua',
  'error.too_short': {
    one: 'Scrieți cel puțin {count} caracter',
    few: 'Scrieți cel puțin {count} caractere',
    other: 'Scrieți cel puțin {count} de caractere',
  },
  'error.too_long': {
    one: 'Scrieți cel mult {count} caracter',
    few: 'Scrieți cel mult {count} caractere',
    other: 'Scrieți cel mult {count} de caractere',
  },
  'error.too_long_by': {
    one: '{limit}. Ați scris cu {count} caracter prea mult',
    few: '{limit}. Ați scris cu {count} caractere prea mult',
    other: '{limit}. Ați scris cu {count} de caractere prea mult',
  },
  'answered.title': 'Răspuns deja trimis: {title}',
  'error.too_small': 'Introduceți un număr mai mare sau egal cu {min}',
  'error.too_large': 'Introduceți un număr mai mic sau egal cu {max}',
  'error.step': 'Introduceți un număr care respectă pasul de {step}',
  'error.step_from': 'Introduceți un număr care respectă pasul de {step}, pornind de la {min}',
  'error.invalid_format': 'Scrieți răspunsul în formatul corect',
  'error.invalid_format.text': 'Scrieți răspunsul pe un singur rând',
  'error.invalid_format.number': 'Introduceți un număr, de exemplu {example}',
  'error.pattern': 'Scrieți răspunsul în formatul cerut',
  'error.email': 'Introduceți o adresă de e-mail în formatul corect, de exemplu name@example.com',
  'error.not_an_option': 'Selectați una dintre opțiuni',
  'error.not_unique': 'Selectați fiecare opțiune o singură dată',
  'error.too_few_selected': {
    one: 'Selectați cel puțin {count} opțiune',
    few: 'Selectați cel puțin {count} opțiuni',
    other: 'Selectați cel puțin {count} de opțiuni',
  },
  'error.too_many_selected': {
    one: 'Selectați cel mult {count} opțiune',
    few: 'Selectați cel mult {count} opțiuni',
    other: 'Selectați cel mult {count} de opțiuni',
  },
  'error.date': 'Introduceți o dată validă',
  'error.date_too_early': 'Alegeți data de {date} sau o dată ulterioară',
  'error.date_too_late': 'Alegeți data de {date} sau o dată anterioară',
  'error.file_too_large': 'Fișierul selectat trebuie să aibă cel mult {size}',
  'error.file_type': 'Fișierul selectat trebuie să fie de unul dintre aceste tipuri: {types}',
  'error.control_character': 'Eliminați din răspuns caracterul invizibil {character}',
  'error.invalid_encoding': 'Răspunsul dumneavoastră nu a putut fi citit; scrieți-l din nou',
  'error.invalid_value': 'Introduceți un răspuns valid',

  // Hints under a label
  'hint.min_length': {
    one: 'Cel puțin {count} caracter.',
    few: 'Cel puțin {count} caractere.',
    other: 'Cel puțin {count} de caractere.',
  },
  'hint.max_length': {
    one: 'Cel mult {count} caracter.',
    few: 'Cel mult {count} caractere.',
    other: 'Cel mult {count} de caractere.',
  },
  'hint.length_between': {
    one: 'Între {min} și {count} caracter.',
    few: 'Între {min} și {count} caractere.',
    other: 'Între {min} și {count} de caractere.',
  },
  'hint.number_between': 'Un număr de la {min} la {max}.',
  'hint.number_min': 'Un număr mai mare sau egal cu {min}.',
  'hint.number_max': 'Un număr mai mic sau egal cu {max}.',
  'hint.date_between': 'O dată între {min} și {max} inclusiv.',
  'hint.date_min': 'Data de {min} sau o dată ulterioară.',
  'hint.date_max': 'Data de {max} sau o dată anterioară.',
  'hint.date_on': 'Doar data de {date}.',
  'date.day': 'Zi',
  'date.month': 'Lună',
  'date.year': 'An',
  'date.example': 'De exemplu, {example}',
  'date.missing_day': 'Data trebuie să includă ziua',
  'date.missing_month': 'Data trebuie să includă luna',
  'date.missing_year': 'Data trebuie să includă anul',
  'date.missing_day_month': 'Data trebuie să includă ziua și luna',
  'date.missing_day_year': 'Data trebuie să includă ziua și anul',
  'date.missing_month_year': 'Data trebuie să includă luna și anul',
  'date.not_real': 'Introduceți o dată care există',
  'date.year_digits': 'Anul trebuie să aibă 4 cifre',
  'date.on': 'Data trebuie să fie {date}',
  'hint.file_size': 'Cel mult {size}.',
  'hint.file_types': 'Tipuri de fișiere: {types}. Cel mult {size}.',
  'hint.select_any': 'Selectați toate opțiunile potrivite.',
  'hint.select_at_least': {
    one: 'Selectați cel puțin una.',
    few: 'Selectați cel puțin {count}.',
    other: 'Selectați cel puțin {count}.',
  },
  'hint.select_at_most': {
    one: 'Selectați cel mult una.',
    few: 'Selectați cel mult {count}.',
    other: 'Selectați cel mult {count}.',
  },
  'hint.select_exactly': { one: 'Selectați una.', few: 'Selectați {count}.', other: 'Selectați {count}.' },
  'hint.select_between': 'Selectați între {min} și {max}.',

  // Controls
  'select.placeholder': 'Alegeți o opțiune',
  'select.no_answer': 'Fără răspuns',
  'file.choose': 'Alegeți un fișier',
  'file.none': 'Niciun fișier ales',
  'file.kept':
    'Ați adăugat deja {name} ({size}). Fișierul va fi trimis împreună cu răspunsul, dacă nu îl eliminați sau nu alegeți alt fișier mai jos.',
  'file.remove': 'Eliminați acest fișier',
  'file.replace': 'Nu trebuie să îl alegeți din nou. Ca să trimiteți alt fișier în locul acestuia, alegeți-l aici.',
  'file.kind.image': 'imagini',
  'file.kind.audio': 'fișiere audio',
  'file.kind.video': 'videoclipuri',
  'file.kind.text': 'fișiere text',

  // After sending
  'receipt.title': 'Răspuns trimis: {title}',
  'receipt.heading': 'Răspunsul dumneavoastră a fost trimis',
  'receipt.default_message': 'Vă mulțumim. Nu mai trebuie să faceți nimic; puteți închide această pagină.',
  'receipt.sent_at': 'Trimis pe {time}.',
  'receipt.what_you_sent': 'Ce ați trimis',
  'receipt.not_answered': 'Fără răspuns',
  'receipt.yes': 'Da',
  'receipt.no': 'Nu',
  'receipt.file': '{name} ({size})',
  'answered.heading': 'Acest formular a primit un răspuns',
  'answered.at': 'Răspunsul a fost trimis pe {time}.',
  'answered.default_message': 'Nu mai trebuie să faceți nimic; puteți închide această pagină.',

  // Pages for every other outcome
  'status.answered.heading': 'Acest formular a primit deja un răspuns',
  'status.answered.message':
    'Un formular acceptă un singur răspuns, iar acesta are deja unul. Ce ați trimis acum nu a fost înregistrat.',
  'status.cancelled.heading': 'Acest formular a fost anulat',
  'status.cancelled.message':
    'Persoana care l-a trimis nu mai are nevoie de un răspuns, așa că formularul nu mai acceptă răspunsuri.',
  'status.expired.heading': 'Acest formular a expirat',
  'status.expired.message':
    'Termenul de răspuns a trecut, așa că formularul nu mai acceptă răspunsuri. Dacă doriți totuși să răspundeți, cereți un link nou persoanei care vi l-a trimis.',
  'status.not_found.heading': 'Formularul nu a fost găsit',
  'status.not_found.message':
    'Nu există niciun formular la această adresă. Verificați dacă linkul este complet; este posibil și ca formularul să fi fost șters.',
  'status.cross_site.heading': 'Răspuns refuzat',
  'status.cross_site.message':
    'Acest răspuns a fost trimis de pe alt site, așa că nu a fost acceptat. Deschideți linkul primit și răspundeți acolo.',
  'status.rate_limited.heading': 'Prea multe încercări',
  'status.rate_limited.message':
    'De la adresa dumneavoastră au venit prea multe răspunsuri în ultimul minut. Așteptați puțin, apoi încercați din nou.',
  'status.too_large.heading': 'Prea mare pentru a fi trimis',
  'status.too_large.message':
    'Ce ați trimis depășește dimensiunea acceptată de acest formular. Alegeți fișiere mai mici, apoi încercați din nou.',
  'status.too_large.limits': 'Cel mai mare fișier acceptat la fiecare întrebare:',
  'status.too_large.file_limit': '{label}: până la {size}',
  'status.too_slow.heading': 'Trimiterea a durat prea mult',
  'status.too_slow.message':
    'Răspunsul dumneavoastră a ajuns prea încet și nu a fost înregistrat, poate din cauza unei conexiuni slabe. Reveniți la formular și trimiteți-l din nou.',
  'status.busy.heading': 'Serverul este ocupat momentan',
  'status.busy.message':
    'Serverul este prea ocupat ca să vă preia răspunsul acum, așa că nu s-a înregistrat nimic. Reveniți la formular și trimiteți-l din nou peste câteva momente.',
  'status.unreadable.heading': 'Răspuns neînțeles',
  'status.unreadable.message':
    'Ce a ajuns nu a putut fi citit ca răspuns la acest formular. Reveniți la formular și trimiteți răspunsul de acolo.',
  'status.error.heading': 'A apărut o eroare',
  'status.error.message':
    'Este posibil ca răspunsul dumneavoastră să nu fi fost înregistrat. Încercați din nou peste câteva momente.',
  'status.retry_after': {
    one: 'Puteți încerca din nou peste o secundă.',
    few: 'Puteți încerca din nou peste {count} secunde.',
    other: 'Puteți încerca din nou peste {count} de secunde.',
  },
  'status.back': 'Înapoi la formular',
  'sent.heading': 'Ce ați trimis',
  'sent.not_recorded': 'Nimic din ce ați trimis nu a fost înregistrat.',
  'sent.intro': 'Mai jos găsiți ce ați trimis, ca să puteți păstra o copie.',
  'sent.copy_label': 'Răspunsurile dvs. ca text',
  'sent.copy_hint': 'Selectați tot textul din această casetă și copiați-l.',
  'review.title': 'Verificați răspunsurile – {title}',
  'review.heading': 'Verificați răspunsurile înainte de trimitere',
  'review.change': 'Modificați',
  'review.continue': 'Continuați',
  'review.send_heading': 'Trimiteți acum răspunsul',
  'review.send_text': 'După trimitere, nu veți mai putea modifica răspunsul.',
  'review.lapsed':
    'Răspunsurile nu au fost trimise. Răspunsurile care așteaptă verificarea sunt păstrate 1 oră, iar acest timp a trecut. Completați din nou formularul.',
  'review.lapsed_kept':
    'Răspunsurile nu au fost trimise. Răspunsurile care așteaptă verificarea sunt păstrate 1 oră, iar acest timp a trecut. Răspunsurile sunt completate mai jos: adăugați din nou eventualele fișiere, apoi continuați.',
}
