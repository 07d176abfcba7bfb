import type { Catalog } from '../catalog.ts'

/**
 * Italian (italiano), addressing the reader as "tu", as Italy's public digital services do.
 * @public loaded by catalogs/index.ts with `require`, which knip does not follow
 */
export const it: Catalog = {
  // The form page
  'page.title_error': 'Errore: {title}',
  'page.submit': 'Invia la risposta',
  'page.asked_by': 'Richiesta di {sender}',
  'page.answer_by': 'Termine per rispondere: {deadline}',
  'page.closes_in': 'Tempo rimasto per rispondere: {duration}.',
  'page.footer':
    'La tua risposta arriva solo a chi ti ha inviato questo link. Questo modulo accetta una sola risposta.',
  'page.new_tab': '(si apre in una nuova scheda)',
  'mark.required': '(obbligatorio)',
  'mark.optional': '(facoltativo)',

  // Errors, as a 422 page shows them
  'summary.title': 'C’è qualcosa da correggere',
  'error.prefix': 'Errore:',
  'error.required.text': 'Inserisci una risposta',
  'error.required.textarea': 'Inserisci una risposta',
  'error.required.email': 'Inserisci un indirizzo email',
  'error.required.number': 'Inserisci un numero',
  'error.required.date': 'Inserisci una data',
  'error.required.select': 'Seleziona un’opzione',
  'error.required.select_multiple': 'Seleziona almeno un’opzione',
  'error.required.file': 'Scegli un file',
  'error.unchecked': 'Seleziona la casella per continuare',
  'error.too_short': {
    one: 'Inserisci almeno {count} carattere',
    many: 'Inserisci almeno {count} di caratteri',
    other: 'Inserisci almeno {count} caratteri',
  },
  'error.too_long': {
    one: 'Inserisci al massimo {count} carattere',
    many: 'Inserisci al massimo {count} di caratteri',
    other: 'Inserisci al massimo {count} caratteri',
  },
  'error.too_long_by': {
    one: '{limit}. C’è {count} carattere di troppo',
    many: '{limit}. Ci sono {count} di caratteri di troppo',
    other: '{limit}. Ci sono {count} caratteri di troppo',
  },
  'answered.title': 'Risposta già inviata: {title}',
  'error.too_small': 'Inserisci un numero uguale o superiore a {min}',
  'error.too_large': 'Inserisci un numero uguale o inferiore a {max}',
  'error.step': 'Inserisci un numero a intervalli di {step}',
  'error.step_from': 'Inserisci un numero a intervalli di {step}, partendo da {min}',
  'error.invalid_format': 'Inserisci la risposta nel formato corretto',
  'error.invalid_format.text': 'Inserisci la risposta su una sola riga',
  'error.invalid_format.number': 'Inserisci un numero, ad esempio {example}',
  'error.pattern': 'Inserisci la risposta nel formato richiesto',
  'error.email': 'Inserisci un indirizzo email nel formato corretto, ad esempio nome@example.com',
  'error.not_an_option': 'Seleziona una delle opzioni',
  'error.not_unique': 'Seleziona ogni opzione una sola volta',
  'error.too_few_selected': {
    one: 'Seleziona almeno {count} opzione',
    many: 'Seleziona almeno {count} di opzioni',
    other: 'Seleziona almeno {count} opzioni',
  },
  'error.too_many_selected': {
    one: 'Seleziona al massimo {count} opzione',
    many: 'Seleziona al massimo {count} di opzioni',
    other: 'Seleziona al massimo {count} opzioni',
  },
  'error.date': 'Inserisci una data esistente',
  'error.date_too_early': 'Scegli una data dal giorno {date} in poi',
  'error.date_too_late': 'Scegli una data fino al giorno {date} compreso',
  'error.file_too_large': 'Il file selezionato non deve superare {size}',
  'error.file_type': 'Il file selezionato deve essere di uno di questi tipi: {types}',
  'error.control_character': 'Rimuovi dalla risposta il carattere invisibile {character}',
  'error.invalid_encoding': 'Non è stato possibile leggere la risposta: scrivila di nuovo',
  'error.invalid_value': 'Inserisci una risposta valida',

  // Hints under a label
  'hint.min_length': {
    one: 'Almeno {count} carattere.',
    many: 'Almeno {count} di caratteri.',
    other: 'Almeno {count} caratteri.',
  },
  'hint.max_length': {
    one: 'Fino a {count} carattere.',
    many: 'Fino a {count} di caratteri.',
    other: 'Fino a {count} caratteri.',
  },
  'hint.length_between': {
    one: 'Da {min} a {count} carattere.',
    many: 'Da {min} a {count} di caratteri.',
    other: 'Da {min} a {count} caratteri.',
  },
  'hint.number_between': 'Un numero da {min} a {max}.',
  'hint.number_min': 'Un numero uguale o superiore a {min}.',
  'hint.number_max': 'Un numero uguale o inferiore a {max}.',
  'hint.date_between': 'Una data dal giorno {min} al giorno {max}.',
  'hint.date_min': 'Una data dal giorno {min} in poi.',
  'hint.date_max': 'Una data fino al giorno {max} compreso.',
  'hint.date_on': 'Solo il giorno {date}.',
  'date.day': 'Giorno',
  'date.month': 'Mese',
  'date.year': 'Anno',
  'date.example': 'Ad esempio, {example}',
  'date.missing_day': 'La data deve includere il giorno',
  'date.missing_month': 'La data deve includere il mese',
  'date.missing_year': 'La data deve includere l’anno',
  'date.missing_day_month': 'La data deve includere il giorno e il mese',
  'date.missing_day_year': 'La data deve includere il giorno e l’anno',
  'date.missing_month_year': 'La data deve includere il mese e l’anno',
  'date.not_real': 'Inserisci una data che esiste',
  'date.year_digits': 'L’anno deve avere 4 cifre',
  'date.on': 'La data deve essere il giorno {date}',
  'hint.file_size': 'Dimensione massima: {size}.',
  'hint.file_types': 'Tipi di file: {types}. Dimensione massima: {size}.',
  'hint.select_any': 'Puoi selezionare più opzioni.',
  'hint.select_at_least': {
    one: 'Seleziona almeno un’opzione.',
    many: 'Seleziona almeno {count} di opzioni.',
    other: 'Seleziona almeno {count} opzioni.',
  },
  'hint.select_at_most': {
    one: 'Seleziona al massimo un’opzione.',
    many: 'Seleziona al massimo {count} di opzioni.',
    other: 'Seleziona al massimo {count} opzioni.',
  },
  'hint.select_exactly': {
    one: 'Seleziona un’opzione.',
    many: 'Seleziona {count} di opzioni.',
    other: 'Seleziona {count} opzioni.',
  },
  'hint.select_between': 'Seleziona da {min} a {max} opzioni.',

  // Controls
  'select.placeholder': 'Scegli un’opzione',
  'select.no_answer': 'Nessuna risposta',
  'file.choose': 'Scegli un file',
  'file.none': 'Nessun file selezionato',
  'file.kept':
    'Hai già aggiunto {name} ({size}). Il file verrà inviato con la tua risposta, a meno che tu non lo rimuova o ne scelga un altro qui sotto.',
  'file.remove': 'Rimuovi questo file',
  'file.replace': 'Non serve sceglierlo di nuovo. Per inviare un altro file al suo posto, sceglilo qui.',
  'file.kind.image': 'immagini',
  'file.kind.audio': 'file audio',
  'file.kind.video': 'video',
  'file.kind.text': 'file di testo',

  // After sending
  'receipt.title': 'Risposta inviata: {title}',
  'receipt.heading': 'La tua risposta è stata inviata',
  'receipt.default_message': 'Grazie. Non devi fare altro: puoi chiudere questa pagina.',
  'receipt.sent_at': 'Data di invio: {time}.',
  'receipt.what_you_sent': 'Riepilogo della risposta',
  'receipt.not_answered': 'Senza risposta',
  'receipt.yes': 'Sì',
  'receipt.no': 'No',
  'receipt.file': '{name} ({size})',
  'answered.heading': 'Questo modulo ha ricevuto una risposta',
  'answered.at': 'Data della risposta: {time}.',
  'answered.default_message': 'Non devi fare altro: puoi chiudere questa pagina.',

  // Pages for every other outcome
  'status.answered.heading': 'Questo modulo ha già ricevuto una risposta',
  'status.answered.message':
    'Un modulo accetta una sola risposta e questo ne ha già una. Quello che hai appena inviato non è stato registrato.',
  'status.cancelled.heading': 'Questo modulo è stato annullato',
  'status.cancelled.message':
    'Chi lo ha inviato non ha più bisogno di una risposta, quindi il modulo non accetta più risposte.',
  'status.expired.heading': 'Questo modulo è scaduto',
  'status.expired.message':
    'Il tempo per rispondere è terminato, quindi il modulo non accetta più risposte. Se vuoi comunque rispondere, chiedi un nuovo link a chi te lo ha inviato.',
  'status.not_found.heading': 'Modulo non trovato',
  'status.not_found.message':
    'A questo indirizzo non c’è nessun modulo. Controlla che il link sia completo. È anche possibile che il modulo sia stato eliminato.',
  'status.cross_site.heading': 'Risposta rifiutata',
  'status.cross_site.message':
    'Questa risposta è stata inviata da un altro sito web, quindi non è stata accettata. Apri il link che hai ricevuto e rispondi da lì.',
  'status.rate_limited.heading': 'Troppi tentativi',
  'status.rate_limited.message':
    'Nell’ultimo minuto sono arrivate troppe risposte dal tuo indirizzo. Attendi qualche istante, poi riprova.',
  'status.too_large.heading': 'Invio troppo grande',
  'status.too_large.message':
    'Quello che hai inviato supera la dimensione accettata da questo modulo. Scegli file più piccoli, poi riprova.',
  'status.too_large.limits': 'Il file più grande che ogni domanda accetta:',
  'status.too_large.file_limit': '{label}: fino a {size}',
  'status.too_slow.heading': 'L’invio ha richiesto troppo tempo',
  'status.too_slow.message':
    'La tua risposta è arrivata troppo lentamente e non è stata registrata, forse a causa di una connessione debole. Torna al modulo e inviala di nuovo.',
  'status.busy.heading': 'Servizio momentaneamente occupato',
  'status.busy.message':
    'In questo momento il server è troppo occupato per ricevere la tua risposta, quindi non è stato registrato nulla. Torna al modulo e inviala di nuovo tra qualche istante.',
  'status.unreadable.heading': 'Risposta non leggibile',
  'status.unreadable.message':
    'I dati arrivati non possono essere letti come risposta a questo modulo. Torna al modulo e invia la risposta da lì.',
  'status.error.heading': 'Si è verificato un problema',
  'status.error.message': 'La tua risposta potrebbe non essere stata registrata. Riprova tra qualche istante.',
  'status.retry_after': {
    one: 'Puoi riprovare tra un secondo.',
    many: 'Puoi riprovare tra {count} di secondi.',
    other: 'Puoi riprovare tra {count} secondi.',
  },
  'status.back': 'Torna al modulo',
  'sent.heading': 'Cosa hai inviato',
  'sent.not_recorded': 'Nulla di quello che hai inviato è stato registrato.',
  'sent.intro': 'Ecco cosa hai inviato, così puoi conservarne una copia.',
  'sent.copy_label': 'Le tue risposte come testo',
  'sent.copy_hint': 'Seleziona tutto il testo in questo riquadro e copialo.',
  'review.title': 'Controlla le tue risposte – {title}',
  'review.heading': 'Controlla le tue risposte prima di inviarle',
  'review.change': 'Modifica',
  'review.continue': 'Continua',
  'review.send_heading': 'Ora invia la risposta',
  'review.send_text': 'Dopo l’invio non potrai più modificare la risposta.',
  'review.lapsed':
    'Le tue risposte non sono state inviate. Le risposte in attesa di controllo vengono conservate per 1 ora e questo tempo è scaduto. Compila di nuovo il modulo.',
  'review.lapsed_kept':
    'Le tue risposte non sono state inviate. Le risposte in attesa di controllo vengono conservate per 1 ora e questo tempo è scaduto. Trovi le tue risposte qui sotto: aggiungi di nuovo gli eventuali file, poi continua.',
}
