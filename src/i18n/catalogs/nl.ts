import type { Catalog } from '../catalog.ts'

/**
 * Dutch (Nederlands), addressing the reader as "u", as Dutch government forms do.
 * @public loaded by catalogs/index.ts with `require`, which knip does not follow
 */
export const nl: Catalog = {
  // The form page
  'page.title_error': 'Fout: {title}',
  'page.submit': 'Antwoord versturen',
  'page.asked_by': 'Verzoek van {sender}',
  'page.answer_by': 'Graag uiterlijk op {deadline} antwoorden',
  'page.closes_in': 'Resterende tijd om te antwoorden: {duration}.',
  'page.footer':
    'Uw antwoord gaat alleen naar wie u deze link heeft gestuurd. U kunt dit formulier één keer beantwoorden.',
  'page.new_tab': '(opent in een nieuw tabblad)',
  'mark.required': '(verplicht)',
  'mark.optional': '(niet verplicht)',

  // Errors, as a 422 page shows them
  'summary.title': 'Controleer uw antwoorden',
  'error.prefix': 'Fout:',
  'error.required.text': 'Vul een antwoord in',
  'error.required.textarea': 'Vul een antwoord in',
  'error.required.email': 'Vul een e-mailadres in',
  'error.required.number': 'Vul een getal in',
  'error.required.date': 'Vul een datum in',
  'error.required.select': 'Kies een optie',
  'error.required.select_multiple': 'Kies minstens één optie',
  'error.required.file': 'Kies een bestand',
  'error.unchecked': 'Vink het vakje aan om verder te gaan',
  'error.too_short': { one: 'Vul minstens {count} teken in', other: 'Vul minstens {count} tekens in' },
  'error.too_long': { one: 'Vul maximaal {count} teken in', other: 'Vul maximaal {count} tekens in' },
  'error.too_long_by': {
    one: '{limit}. U heeft {count} teken te veel',
    other: '{limit}. U heeft {count} tekens te veel',
  },
  'answered.title': 'Beantwoord: {title}',
  'error.too_small': 'Vul een getal in van {min} of hoger',
  'error.too_large': 'Vul een getal in van {max} of lager',
  'error.step': 'Vul een getal in met stappen van {step}',
  'error.step_from': 'Vul een getal in met stappen van {step}, te beginnen bij {min}',
  'error.invalid_format': 'Vul het antwoord in de juiste vorm in',
  'error.invalid_format.text': 'Vul het antwoord in op één regel',
  'error.invalid_format.number': 'Vul een getal in, bijvoorbeeld {example}',
  'error.pattern': 'Vul het antwoord in de gevraagde vorm in',
  'error.email': 'Vul een geldig e-mailadres in, bijvoorbeeld naam@example.com',
  'error.not_an_option': 'Kies een van de opties',
  'error.not_unique': 'Kies elke optie maar één keer',
  'error.too_few_selected': { one: 'Kies minstens {count} optie', other: 'Kies minstens {count} opties' },
  'error.too_many_selected': { one: 'Kies maximaal {count} optie', other: 'Kies maximaal {count} opties' },
  'error.date': 'Vul een bestaande datum in',
  'error.date_too_early': 'Kies een datum op of na {date}',
  'error.date_too_late': 'Kies een datum op of vóór {date}',
  'error.file_too_large': 'Het gekozen bestand mag maximaal {size} groot zijn',
  'error.file_type': 'Het gekozen bestand moet een van deze typen zijn: {types}',
  'error.control_character': 'Haal het onzichtbare teken {character} uit uw antwoord',
  'error.invalid_encoding': 'Uw antwoord kon niet worden gelezen. Typ het opnieuw',
  'error.invalid_value': 'Vul een geldig antwoord in',

  // Hints under a label
  'hint.min_length': { one: 'Minstens {count} teken.', other: 'Minstens {count} tekens.' },
  'hint.max_length': { one: 'Maximaal {count} teken.', other: 'Maximaal {count} tekens.' },
  'hint.length_between': { one: 'Van {min} tot {count} teken.', other: 'Van {min} tot {count} tekens.' },
  'hint.number_between': 'Een getal van {min} tot en met {max}.',
  'hint.number_min': 'Een getal van {min} of hoger.',
  'hint.number_max': 'Een getal van {max} of lager.',
  'hint.date_between': 'Een datum van {min} tot en met {max}.',
  'hint.date_min': 'Een datum op of na {min}.',
  'hint.date_max': 'Een datum op of vóór {max}.',
  'hint.date_on': 'Alleen op {date}.',
  'date.day': 'Dag',
  'date.month': 'Maand',
  'date.year': 'Jaar',
  'date.example': 'Bijvoorbeeld {example}',
  'date.missing_day': 'De datum moet een dag bevatten',
  'date.missing_month': 'De datum moet een maand bevatten',
  'date.missing_year': 'De datum moet een jaar bevatten',
  'date.missing_day_month': 'De datum moet een dag en een maand bevatten',
  'date.missing_day_year': 'De datum moet een dag en een jaar bevatten',
  'date.missing_month_year': 'De datum moet een maand en een jaar bevatten',
  'date.not_real': 'Vul een datum in die bestaat',
  'date.year_digits': 'Het jaar moet uit 4 cijfers bestaan',
  'date.on': 'De datum moet {date} zijn',
  'hint.file_size': 'Maximaal {size}.',
  'hint.file_types': 'Bestandstypen: {types}. Maximaal {size}.',
  'hint.select_any': 'Kies alles wat van toepassing is.',
  'hint.select_at_least': { one: 'Kies er minstens {count}.', other: 'Kies er minstens {count}.' },
  'hint.select_at_most': { one: 'Kies er maximaal {count}.', other: 'Kies er maximaal {count}.' },
  'hint.select_exactly': { one: 'Kies er één.', other: 'Kies er {count}.' },
  'hint.select_between': 'Kies er {min} tot en met {max}.',

  // Controls
  'select.placeholder': 'Kies een optie',
  'select.no_answer': 'Geen antwoord',
  'file.choose': 'Kies een bestand',
  'file.none': 'Geen bestand gekozen',
  'file.kept':
    'U heeft {name} ({size}) al toegevoegd. Dit bestand wordt met uw antwoord meegestuurd, tenzij u het verwijdert of hieronder een ander bestand kiest.',
  'file.remove': 'Dit bestand verwijderen',
  'file.replace': 'U hoeft het niet opnieuw te kiezen. Wilt u liever een ander bestand versturen? Kies het dan hier.',
  'file.kind.image': 'afbeeldingen',
  'file.kind.audio': 'audiobestanden',
  'file.kind.video': 'video’s',
  'file.kind.text': 'tekstbestanden',

  // After sending
  'receipt.title': 'Antwoord verstuurd: {title}',
  'receipt.heading': 'Uw antwoord is verstuurd',
  'receipt.default_message': 'Bedankt. U hoeft verder niets te doen. U kunt deze pagina sluiten.',
  'receipt.sent_at': 'Verstuurd op {time}.',
  'receipt.what_you_sent': 'Wat u heeft verstuurd',
  'receipt.not_answered': 'Niet beantwoord',
  'receipt.yes': 'Ja',
  'receipt.no': 'Nee',
  'receipt.file': '{name} ({size})',
  'answered.heading': 'Dit formulier is beantwoord',
  'answered.at': 'Het antwoord is verstuurd op {time}.',
  'answered.default_message': 'U hoeft verder niets te doen. U kunt deze pagina sluiten.',

  // Pages for every other outcome
  'status.answered.heading': 'Dit formulier is al beantwoord',
  'status.answered.message':
    'Een formulier kan maar één antwoord krijgen, en dit formulier heeft er al een. Wat u net heeft verstuurd, is niet opgeslagen.',
  'status.cancelled.heading': 'Dit formulier is ingetrokken',
  'status.cancelled.message':
    'Wie het heeft verstuurd, heeft geen antwoord meer nodig. Daarom kunt u het niet meer beantwoorden.',
  'status.expired.heading': 'Dit formulier is verlopen',
  'status.expired.message':
    'De termijn om te antwoorden is voorbij. Daarom kunt u het niet meer beantwoorden. Wilt u toch antwoorden? Vraag dan om een nieuwe link bij wie u het formulier heeft gestuurd.',
  'status.not_found.heading': 'Formulier niet gevonden',
  'status.not_found.message':
    'Op dit adres staat geen formulier. Controleer of de link volledig is. Het kan ook zijn dat het formulier is verwijderd.',
  'status.cross_site.heading': 'Antwoord geweigerd',
  'status.cross_site.message':
    'Dit antwoord is vanaf een andere website verstuurd en daarom niet geaccepteerd. Open de link die u heeft gekregen en antwoord daar.',
  'status.rate_limited.heading': 'Te veel pogingen',
  'status.rate_limited.message':
    'In de afgelopen minuut kwamen er te veel antwoorden van uw adres. Wacht even en probeer het daarna opnieuw.',
  'status.too_large.heading': 'Te groot om te versturen',
  'status.too_large.message':
    'Wat u heeft verstuurd, is groter dan dit formulier toestaat. Kies kleinere bestanden en probeer het opnieuw.',
  'status.too_large.limits': 'Het grootste bestand dat elke vraag accepteert:',
  'status.too_large.file_limit': '{label}: tot {size}',
  'status.too_slow.heading': 'Versturen duurde te lang',
  'status.too_slow.message':
    'Uw antwoord kwam te langzaam binnen en is niet opgeslagen. Misschien is de verbinding slecht. Ga terug naar het formulier en verstuur uw antwoord opnieuw.',
  'status.busy.heading': 'Even te druk',
  'status.busy.message':
    'De server is nu te druk om uw antwoord aan te nemen. Er is niets opgeslagen. Ga terug naar het formulier en verstuur uw antwoord zo meteen opnieuw.',
  'status.unreadable.heading': 'Antwoord niet leesbaar',
  'status.unreadable.message':
    'Wat er binnenkwam, kon niet worden gelezen als antwoord op dit formulier. Ga terug naar het formulier en verstuur uw antwoord van daaruit.',
  'status.error.heading': 'Er ging iets mis',
  'status.error.message': 'Uw antwoord is misschien niet opgeslagen. Probeer het zo meteen opnieuw.',
  'status.retry_after': {
    one: 'U kunt het over {count} seconde opnieuw proberen.',
    other: 'U kunt het over {count} seconden opnieuw proberen.',
  },
  'status.back': 'Terug naar het formulier',
  'sent.heading': 'Wat u heeft verstuurd',
  'sent.not_recorded': 'Niets van wat u heeft verstuurd, is opgeslagen.',
  'sent.intro': 'Hieronder ziet u wat u heeft verstuurd, zodat u een kopie kunt bewaren.',
  'sent.copy_label': 'Uw antwoorden als tekst',
  'sent.copy_hint': 'Selecteer alle tekst in dit vak en kopieer die.',
  'review.title': 'Controleer uw antwoorden – {title}',
  'review.heading': 'Controleer uw antwoorden voordat u ze verstuurt',
  'review.change': 'Wijzigen',
  'review.continue': 'Doorgaan',
  'review.send_heading': 'Verstuur nu uw antwoord',
  'review.send_text': 'Na het versturen kunt u uw antwoord niet meer wijzigen.',
  'review.lapsed':
    'Uw antwoorden zijn niet verstuurd. Antwoorden die op controle wachten, worden 1 uur bewaard, en die tijd is voorbij. Vul het formulier opnieuw in.',
  'review.lapsed_kept':
    'Uw antwoorden zijn niet verstuurd. Antwoorden die op controle wachten, worden 1 uur bewaard, en die tijd is voorbij. Uw antwoorden staan hieronder ingevuld: voeg eventuele bestanden opnieuw toe en ga dan verder.',
}
